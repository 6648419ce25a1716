// The decisions of the archive routes over plain inputs: which names can be opened, which archives
// are refused whole (names that leave their folder, zip bombs), the tree of an archive's entries,
// one folder of it, the caps of an extraction, and where it may write (docs/decisions.md D13).
import { FileError } from "../../http/errors.ts";
import { requireUploadable, type Viewer } from "../fs/rules.ts";
import type { FsState } from "../fs/state.ts";
import {
  ENTRY_NOT_FOUND,
  bombEntry,
  formatRefused,
  tooLargeToExtract,
  tooManyEntries,
  tooManyToExtract,
  unsafeEntry,
} from "./messages.ts";
import { MAX_ARCHIVE_ENTRIES, type ZipEntry } from "./zip.ts";

/** What `/api/public/archive_extensions` lists: only what Gatehouse can open. */
export const ARCHIVE_EXTENSIONS = [".zip"];

/** An entry expanding over this many times its compressed size, past BOMB_FLOOR_BYTES, is refused. */
const MAX_EXPANSION_RATIO = 100;
/** Below this an entry may expand as much as it likes (a page of repeated text compresses 500 times). */
const BOMB_FLOOR_BYTES = 1024 * 1024;
/** An extraction within one request writes at most this much (docs/files.md, Archives). */
export const MAX_EXTRACT_BYTES = 512 * 1024 * 1024;
/** ... and at most this many files and folders (each costs a few upstream calls). */
export const MAX_EXTRACT_ENTRIES = 200;

/**
 * The caps of one request, over every archive it extracts: the files and folders it writes and the
 * bytes their entries declare (which is all they can give: D13.5). Checked before the first write.
 */
export function requireWithinCaps(plans: readonly { steps: readonly unknown[]; bytes: number }[]) {
  let steps = 0;
  let bytes = 0;
  for (const plan of plans) {
    steps += plan.steps.length;
    bytes += plan.bytes;
  }
  if (steps > MAX_EXTRACT_ENTRIES) throw new FileError("refused", tooManyToExtract(MAX_EXTRACT_ENTRIES));
  if (bytes > MAX_EXTRACT_BYTES) throw new FileError("refused", tooLargeToExtract(MAX_EXTRACT_BYTES));
}

/**
 * Every file and folder the plans write is held to what fs/put decides for it (fs/rules.ts
 * requireUploadable: a name put would take; the folder it lands in reached past the hide rules, its
 * meta password passed with the request's password, write permission or a meta's write grant there),
 * all before the first write: one refused path refuses the request (D13.6). The metas are those the
 * request already read.
 */
export function requireExtractable(
  viewer: Viewer,
  state: FsState,
  plans: readonly { steps: readonly { target: string }[] }[],
  password: string,
) {
  for (const plan of plans) for (const { target } of plan.steps) requireUploadable(viewer, state, target, password);
}

/** The format of `name` by its last extension (AList looked after the first dot first). */
export function requireZipName(name: string) {
  if (!name.toLowerCase().endsWith(".zip")) throw new FileError("refused", formatRefused(name));
}

/** An entry's path segments: `\` read as a folder separator, empty and `.` segments dropped. */
export const segmentsOf = (name: string) =>
  name
    .replace(/\\/g, "/")
    .split("/")
    .filter((segment) => segment !== "" && segment !== ".");

/**
 * An archive with a name that would leave the folder it is extracted into (absolute, a drive
 * letter, `..`, NUL, also through backslashes) is refused whole, for browsing as for extracting.
 */
export function requireSafeNames(entries: readonly ZipEntry[]) {
  for (const { name } of entries) {
    const slashed = name.replace(/\\/g, "/");
    if (
      slashed.startsWith("/") ||
      /^[a-zA-Z]:/.test(slashed) ||
      slashed.includes("\0") ||
      slashed.split("/").includes("..")
    )
      throw new FileError("refused", unsafeEntry(name));
  }
}

/** A zip bomb: an entry that declares far more bytes than it holds. Its bytes are never inflated. */
export function requireNoBomb(entry: ZipEntry) {
  if (entry.size > BOMB_FLOOR_BYTES && entry.size > MAX_EXPANSION_RATIO * Math.max(1, entry.compressedSize))
    throw new FileError("refused", bombEntry(entry.name, entry.size, MAX_EXPANSION_RATIO));
}

export interface ArchiveNode {
  name: string;
  isDir: boolean;
  size: number;
  modified: Date;
  /** The entry behind a file (folders may have none: implied by deeper names). */
  entry?: ZipEntry;
  children: ArchiveNode[];
}

/**
 * The entries as a tree. Folders that are only prefixes of deeper names are made (AList's list
 * left them out); a folder takes its entry's time when it has one, else the archive's. Past
 * MAX_ARCHIVE_ENTRIES files and folders the archive is refused: deep names imply a folder per
 * segment, so few entries could make millions of them (docs/decisions.md D13.7).
 */
export function archiveTree(entries: readonly ZipEntry[], archiveModified: Date): ArchiveNode {
  const root: ArchiveNode = { name: "", isDir: true, size: 0, modified: archiveModified, children: [] };
  // Each folder's folders and file names by name: a name is walked in time of its length, never
  // by joining or searching paths (a deep name in every entry would cost its square).
  const within = new Map<ArchiveNode, { folders: Map<string, ArchiveNode>; files: Set<string> }>();
  const indexOf = (folder: ArchiveNode) => {
    const known = within.get(folder);
    if (known) return known;
    const made = { folders: new Map<string, ArchiveNode>(), files: new Set<string>() };
    within.set(folder, made);
    return made;
  };
  let nodes = 0;
  const counted = () => {
    if (++nodes > MAX_ARCHIVE_ENTRIES) throw new FileError("refused", tooManyEntries(MAX_ARCHIVE_ENTRIES));
  };
  const folderAt = (segments: readonly string[]): ArchiveNode => {
    let folder = root;
    for (const name of segments) {
      const { folders } = indexOf(folder);
      let next = folders.get(name);
      if (!next) {
        counted();
        next = { name, isDir: true, size: 0, modified: archiveModified, children: [] };
        folder.children.push(next);
        folders.set(name, next);
      }
      folder = next;
    }
    return folder;
  };
  for (const entry of entries) {
    const segments = segmentsOf(entry.name);
    if (segments.length === 0) continue;
    if (entry.isDir) {
      folderAt(segments).modified = entry.modified;
      continue;
    }
    const parent = folderAt(segments.slice(0, -1));
    const name = segments.at(-1)!;
    const index = indexOf(parent);
    if (index.folders.has(name) || index.files.has(name)) continue;
    counted();
    index.files.add(name);
    parent.children.push({ name, isDir: false, size: entry.size, modified: entry.modified, entry, children: [] });
  }
  return root;
}

/** The node at `innerPath` ("/" is the archive's root); `object not found` when the archive has none. */
export function nodeAt(root: ArchiveNode, innerPath: string): ArchiveNode {
  let node = root;
  for (const segment of segmentsOf(innerPath)) {
    const child = node.children.find((candidate) => candidate.name === segment);
    if (!child) throw new FileError("not_found", ENTRY_NOT_FOUND);
    node = child;
  }
  return node;
}

/** The files at and below `node`, with their paths relative to it, and the folders to make, in tree order. */
export function flatten(node: ArchiveNode, prefix = ""): { path: string; node: ArchiveNode }[] {
  const out: { path: string; node: ArchiveNode }[] = [];
  for (const child of node.children) {
    const path = prefix === "" ? child.name : `${prefix}/${child.name}`;
    out.push({ path, node: child });
    if (child.isDir) out.push(...flatten(child, path));
  }
  return out;
}
