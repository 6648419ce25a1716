// UrlTree: a tree of folders and links written as text (AList v3.58.0 drivers/url_tree/util.go:36,
// :98). Each line is a folder (`name:`) or a file (`[name:][size:][modified:]URL`), nested by two
// spaces. Nothing is stored upstream: a file is its URL, and /d sends the client there.
import { driverConfig, items } from "./items.ts";
import {
  CheckFailed,
  FileError,
  notAFile,
  notAFolder,
  objectNotFound,
  type Driver,
  type FileBackend,
  type FileObject,
  type StorageHandle,
} from "./types.ts";

export interface UrlNode {
  name: string;
  /** Files only. */
  url?: string;
  size: number;
  /** Unix seconds; 0 when the line gives none. */
  modified: number;
  children: UrlNode[];
}

/** Parses `url_structure`; throws CheckFailed naming the line that is wrong. */
export function parseUrlTree(text: string): UrlNode {
  const root: UrlNode = { name: "root", size: 0, modified: 0, children: [] };
  const stack: { node: UrlNode; level: number }[] = [{ node: root, level: -1 }];
  text.split("\n").forEach((raw, index) => {
    const line = raw.replace(/\r$/, "");
    const indent = line.length - line.replace(/^ +/, "").length;
    const content = line.trim();
    if (content === "") return;
    if (indent % 2 !== 0)
      throw new CheckFailed(`url_structure line ${index + 1}: indented by ${indent} spaces, not a multiple of 2`);
    const level = indent / 2;
    while (level <= stack.at(-1)!.level) stack.pop();
    const parent = stack.at(-1)!.node;
    if (level > stack.at(-1)!.level + 1)
      throw new CheckFailed(`url_structure line ${index + 1}: indented deeper than a folder below the line above`);
    if (content.endsWith(":")) {
      const folder: UrlNode = { name: content.slice(0, -1), size: 0, modified: 0, children: [] };
      parent.children.push(folder);
      stack.push({ node: folder, level });
    } else {
      parent.children.push(parseFileLine(content, index + 1));
    }
  });
  sumSizes(root);
  return root;
}

function parseFileLine(line: string, number: number): UrlNode {
  const at = [line.indexOf("http://"), line.indexOf("https://")].filter((i) => i >= 0).sort((a, b) => a - b)[0];
  if (at === undefined) throw new CheckFailed(`url_structure line ${number}: a file needs an http:// or https:// URL`);
  const url = line.slice(at);
  const info = line.slice(0, at);
  if (info === "") {
    const last =
      url
        .replace(/[?#].*$/, "")
        .replace(/^https?:\/\/[^/]*/, "")
        .split("/")
        .filter(Boolean)
        .at(-1) ?? url;
    let name = last;
    try {
      name = decodeURIComponent(last);
    } catch {
      // keep it as written
    }
    return { name, url, size: 0, modified: 0, children: [] };
  }
  if (!info.endsWith(":") || info === ":")
    throw new CheckFailed(`url_structure line ${number}: write [name:][size:][modified:]URL`);
  const [name, size, modified] = info.slice(0, -1).split(":");
  const integer = (value: string | undefined, what: string) => {
    if (value === undefined) return 0;
    if (!/^\d+$/.test(value)) throw new CheckFailed(`url_structure line ${number}: the ${what} must be an integer`);
    return Number(value);
  };
  return {
    name: name!,
    url,
    size: integer(size, "size"),
    modified: integer(modified, "modified time (Unix seconds)"),
    children: [],
  };
}

function sumSizes(node: UrlNode): number {
  if (node.url !== undefined) return node.size;
  node.size = node.children.reduce((total, child) => total + sumSizes(child), 0);
  return node.size;
}

export const urlTree: Driver = {
  config: driverConfig({ name: "UrlTree", local_sort: true, no_cache: true, default_root: "" }),
  additional: items([
    {
      name: "url_structure",
      type: "text",
      required: true,
      default:
        "https://jsd.nn.ci/gh/alist-org/alist/README.md\nhttps://jsd.nn.ci/gh/alist-org/alist/README_cn.md\nfolder:\n  CONTRIBUTING.md:1635:https://jsd.nn.ci/gh/alist-org/alist/CONTRIBUTING.md\n  CODE_OF_CONDUCT.md:2093:https://jsd.nn.ci/gh/alist-org/alist/CODE_OF_CONDUCT.md",
      help: "structure:FolderName:\n  [FileName:][FileSize:][Modified:]Url",
    },
    {
      name: "head_size",
      type: "bool",
      default: "false",
      help: "Use head method to get file size, but it may be failed.",
    },
    { name: "writable", type: "bool", default: "false" },
  ]),
  async check(addition) {
    parseUrlTree(addition.text("url_structure"));
  },
  files: (storage) => urlTreeFiles(storage),
};

/**
 * Read-only at the edge: writing means saving the tree back into the storage's addition, which
 * is not built yet; writes answer AList's `permission denied` (or say they are not built when
 * `writable` is on).
 */
function urlTreeFiles(storage: StorageHandle): FileBackend {
  const root = parseUrlTree(storage.addition.text("url_structure"));
  const find = (path: string): UrlNode => {
    let node = root;
    for (const segment of path.split("/").filter(Boolean)) {
      if (node.url !== undefined) throw notAFolder();
      const child = node.children.find((c) => c.name === segment);
      if (!child) throw objectNotFound();
      node = child;
    }
    return node;
  };
  const toObject = (node: UrlNode, path: string): FileObject => ({
    name: node.name,
    size: node.size,
    isDir: node.url === undefined,
    modified: new Date(node.modified * 1000),
    path,
  });
  const join = (dir: string, name: string) => (dir === "/" ? `/${name}` : `${dir}/${name}`);
  const refuse = async () => {
    throw new FileError(
      "forbidden",
      storage.addition.flag("writable") ? "writing to a UrlTree storage is not built yet" : "permission denied",
    );
  };
  return {
    async list(dir) {
      const node = find(dir);
      if (node.url !== undefined) throw notAFolder();
      return node.children.map((child) => toObject(child, join(dir, child.name)));
    },
    async get(path) {
      return toObject(find(path), path);
    },
    async link(path) {
      const node = find(path);
      if (node.url === undefined) throw notAFile();
      return { url: node.url };
    },
    makeDir: refuse,
    rename: refuse,
    move: refuse,
    copy: refuse,
    remove: refuse,
    put: refuse,
  };
}
