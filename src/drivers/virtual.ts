// Virtual: generated files for testing clients and benchmarks. Nothing to reach, so it always
// works. Unlike AList's (random names on every listing), the tree is a pure function of the
// storage and the path: the same folder lists the same entries on every request and isolate,
// and a file's bytes are the same on every read, so ranges and resumed downloads agree.
import { driverConfig, items } from "./items.ts";
import {
  objectNotFound,
  notAFolder,
  type ByteSource,
  type Driver,
  type FileBackend,
  type FileObject,
  type StorageHandle,
} from "./types.ts";

export const virtual: Driver = {
  config: driverConfig({ name: "Virtual", local_sort: true, only_local: true, need_ms: true, default_root: "" }),
  additional: items([
    { name: "root_folder_path", type: "string" },
    { name: "num_file", type: "number", default: "30", required: true },
    { name: "num_folder", type: "number", default: "30", required: true },
    { name: "max_file_size", type: "number", default: "1073741824", required: true },
    { name: "min_file_size", type: "number", default: "1048576", required: true },
  ]),
  async check() {},
  files: (storage) => virtualFiles(storage),
};

/** At most this many entries a folder, whatever the addition says: a listing stays small enough to send. */
const MAX_ENTRIES = 10_000;
const CHUNK = 64 * 1024;

/** FNV-1a: a stable 32-bit seed from text. */
function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/** mulberry32: a small, fast generator; good enough for names and sizes. */
function generator(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

function virtualFiles(storage: StorageHandle): FileBackend {
  const count = (name: string) =>
    Math.min(MAX_ENTRIES, Math.max(0, Math.floor(Number(storage.addition.text(name)) || 0)));
  const files = count("num_file");
  const folders = count("num_folder");
  const minSize = Math.max(0, Number(storage.addition.text("min_file_size")) || 0);
  const maxSize = Math.max(minSize, Number(storage.addition.text("max_file_size")) || 0);

  /** AList's shape: `num_file` files of 10-character names, then `num_folder` folders. */
  function children(dir: string): FileObject[] {
    const next = generator(seedOf(`${storage.id}:${dir}`));
    // Ten letters added one by one: no array per name, for folders of 10,000 entries.
    const name = () => {
      let text = "";
      for (let i = 0; i < 10; i++) text += LETTERS[Math.floor(next() * LETTERS.length)];
      return text;
    };
    const entries: FileObject[] = [];
    const taken = new Set<string>();
    const unique = (n: string) => {
      while (taken.has(n)) n = name();
      taken.add(n);
      return n;
    };
    for (let i = 0; i < files + folders; i++) {
      const isDir = i >= files;
      const size = isDir ? 0 : minSize + Math.floor(next() * (maxSize - minSize + 1));
      const entryName = unique(name());
      entries.push({
        name: entryName,
        size,
        isDir,
        modified: storage.modified,
        path: dir === "/" ? `/${entryName}` : `${dir}/${entryName}`,
      });
    }
    return entries;
  }

  /** Each folder on the way must exist in its parent's listing. */
  function find(path: string): FileObject {
    if (path === "/") return { name: "root", size: 0, isDir: true, modified: storage.modified, path: "/" };
    const segments = path.split("/").filter(Boolean);
    let dir = "/";
    let found: FileObject | undefined;
    for (const segment of segments) {
      if (found && !found.isDir) throw objectNotFound();
      found = children(dir).find((entry) => entry.name === segment);
      if (!found) throw objectNotFound();
      dir = found.path;
    }
    return found!;
  }

  return {
    async list(dir) {
      if (!find(dir).isDir) throw notAFolder();
      return children(dir);
    },
    async get(path) {
      return find(path);
    },
    async link(path) {
      const file = find(path);
      const source: ByteSource = {
        size: file.size,
        modified: file.modified,
        read: (start, end) => Promise.resolve(bytesOf(seedOf(path), start, end)),
      };
      return { source };
    },
  };
}

/** A fixed pseudo-random block; a file's bytes are this block, rotated by the file's seed, repeated. */
const BLOCK = (() => {
  const next = generator(0x9e3779b9);
  return Uint8Array.from({ length: CHUNK }, () => Math.floor(next() * 256));
})();

function bytesOf(seed: number, start: number, end: number): ReadableStream<Uint8Array> {
  let offset = start;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset > end) {
          controller.close();
          return;
        }
        const length = Math.min(CHUNK, end - offset + 1);
        const chunk = new Uint8Array(length);
        const at = (offset + seed) % CHUNK;
        const first = Math.min(length, CHUNK - at);
        chunk.set(BLOCK.subarray(at, at + first));
        if (first < length) chunk.set(BLOCK.subarray(0, length - first), first);
        offset += length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 1 },
  );
}
