// Extraction of a ZIP into a folder of a storage, streamed entry by entry from range reads into the
// target's put: no temporary file. Planned first (names, bombs, caps checked before anything is
// written; the routes then check every target path, D13.6), then written in bounded steps from a
// cursor, so a task engine can run the same steps across requests (docs/decisions.md D13.4).
import { makeDirs, putFile } from "../fs/operations.ts";
import type { MountTree } from "../fs/mounts.ts";
import { baseName, joinName } from "../fs/path.ts";
import {
  type ArchiveNode,
  archiveTree,
  flatten,
  nodeAt,
  requireNoBomb,
  requireSafeNames,
  requireWithinCaps,
  segmentsOf,
} from "./rules.ts";
import { openArchive } from "./source.ts";
import { type ByteReader, openEntry, readZipDirectory, requireOpenable, type ZipEntry } from "./zip.ts";
import { contentTypeOf } from "../fs/serve.ts";

/** Entries up to this size are read whole before they are written; larger ones stream. */
const CHECKED_FIRST_BYTES = 1024 * 1024;

export interface ExtractJob {
  /** The archive's full path. */
  archive: string;
  /** What to extract: "/" for everything, else a folder or a file inside the archive. */
  innerPath: string;
  /** The full path of the folder to extract into. */
  destDir: string;
  password: string;
  /** Into `destDir/<archive name without .zip>/`, as AList's put_into_new_dir. */
  intoNewFolder: boolean;
}

export interface ExtractPlan {
  reader: ByteReader;
  /** Folders to make and files to write, parents first, as full destination paths. */
  steps: { target: string; node: ArchiveNode }[];
  bytes: number;
}

/** Reads the archive's directory and lays out every write, refusing the archive before any write when it must be. */
async function planExtraction(tree: MountTree, job: ExtractJob): Promise<ExtractPlan> {
  const { object, reader } = await openArchive(tree, job.archive);
  const directory = await readZipDirectory(reader);
  return { reader, ...planSteps(directory.entries, object.modified, job) };
}

/**
 * Every write of `job` over the archive's entries, as full destination paths, parents first; the
 * archive refused whole when a name leaves its folder, an entry is a bomb or cannot be opened, or the
 * extraction passes the caps of one request.
 */
export function planSteps(
  entries: readonly ZipEntry[],
  archiveModified: Date,
  job: ExtractJob,
): Omit<ExtractPlan, "reader"> {
  requireSafeNames(entries);
  const root = archiveTree(entries, archiveModified);
  const chosen = nodeAt(root, job.innerPath);
  let base = job.destDir;
  if (job.intoNewFolder) base = joinName(base, baseName(job.archive).replace(/\.zip$/i, ""));
  const inner = segmentsOf(job.innerPath);
  // A subtree lands as a folder of its own name; a single file as itself.
  const steps =
    inner.length === 0
      ? flatten(chosen).map(({ path, node }) => ({ target: `${base}/${path}`.replace(/\/+/g, "/"), node }))
      : [
          { target: joinName(base, chosen.name), node: chosen },
          ...(chosen.isDir
            ? flatten(chosen).map(({ path, node }) => ({ target: joinName(joinName(base, chosen.name), path), node }))
            : []),
        ];
  if (job.intoNewFolder) steps.unshift({ target: base, node: { ...root, name: baseName(base), children: [] } });
  let bytes = 0;
  for (const { node } of steps) {
    if (!node.entry) continue;
    requireNoBomb(node.entry);
    requireOpenable(node.entry, job.password);
    bytes += node.entry.size;
  }
  requireWithinCaps([{ steps, bytes }]);
  return { steps, bytes };
}

/**
 * Runs the plan's steps from `cursor`, at most `count` of them; answers where the next call starts
 * (null when done). A file that fails midway is not left behind (putFile), and the step fails.
 */
export async function extractSteps(
  tree: MountTree,
  plan: ExtractPlan,
  password: string,
  cursor = 0,
  count = Number.POSITIVE_INFINITY,
): Promise<number | null> {
  const end = Math.min(plan.steps.length, cursor + count);
  for (let i = cursor; i < end; i++) {
    const { target, node } = plan.steps[i]!;
    if (node.isDir || !node.entry) {
      await makeDirs(tree, target);
      continue;
    }
    const dir = target.slice(0, target.lastIndexOf("/")) || "/";
    const mounted = await tree.mount(dir);
    let body = await openEntry(plan.reader, node.entry, password);
    // A small entry is inflated and checked (size, CRC) before its write starts, so a lying one
    // creates nothing even on a storage whose PUT shows a file while it is written (D13.5).
    if (node.entry.size <= CHECKED_FIRST_BYTES) body = new Response(await new Response(body).arrayBuffer()).body!;
    await putFile(mounted, {
      name: node.name,
      size: node.entry.size,
      body,
      contentType: contentTypeOf(node.name),
      modified: node.modified,
    });
  }
  return end < plan.steps.length ? end : null;
}

/**
 * The plans of one request's extractions, each archive's directory read in turn: every archive is
 * planned, and the caps held over them together, before anything is written (D13.4).
 */
export async function planExtractions(tree: MountTree, jobs: readonly ExtractJob[]): Promise<ExtractPlan[]> {
  const plans: ExtractPlan[] = [];
  for (const job of jobs) plans.push(await planExtraction(tree, job));
  requireWithinCaps(plans);
  return plans;
}
