// What a task and its units keep in their `payload` column, read once: a unit's when it is claimed
// (or found expired by the sweep), a task's when it is retried or held to its creator. A row this
// version cannot read fails its unit with a message naming the unit and the field, instead of a
// TypeError deep in a copy (docs/decisions.md D23.4).
import * as z from "zod/mini";

const Indexing = z.nullish(z.object({ ignore: z.array(z.string()) }));

/** A big file's upload in parts: the upstream's upload and the tags of the parts stored so far. */
const Parted = z.object({
  upload: z.object({ dir: z.string(), name: z.string(), uploadId: z.string() }),
  tags: z.array(z.string()),
  partBytes: z.number(),
});

/** A copy: `from` (full path) into the folder `toDir` as `name`; what a walk learnt of it rides along. */
const Copy = z.object({
  from: z.string(),
  toDir: z.string(),
  name: z.string(),
  isDir: z.optional(z.boolean()),
  size: z.optional(z.number()),
  parted: z.optional(Parted),
  /** Auto update of the search index, as the request that started the task would have done it. */
  index: Indexing,
});

/**
 * Small files of one folder copied in one unit (docs/decisions.md D23.1): each `name` of `fromDir`
 * into `toDir`; `done` names those stored so far (written with every heartbeat), which a rerun skips.
 */
const Files = z.object({
  fromDir: z.string(),
  toDir: z.string(),
  files: z.array(z.object({ name: z.string(), size: z.number() })),
  done: z.optional(z.array(z.string())),
  index: Indexing,
});

/** A move's final removal of its source. */
const Remove = z.object({ path: z.string(), index: Indexing });

/** An offline download: `url` into the folder `toDir`. */
const Fetch = z.object({
  url: z.string(),
  toDir: z.string(),
  name: z.optional(z.string()),
  size: z.optional(z.number()),
  parted: z.optional(Parted),
  index: Indexing,
});

export type PartedState = z.infer<typeof Parted>;
export type CopyPayload = z.infer<typeof Copy>;
export type FilesPayload = z.infer<typeof Files>;
export type RemovePayload = z.infer<typeof Remove>;
export type FetchPayload = z.infer<typeof Fetch>;

/** A unit's work as its row says, by kind. */
export type UnitPayload =
  | { kind: "copy"; payload: CopyPayload }
  | { kind: "files"; payload: FilesPayload }
  | { kind: "remove"; payload: RemovePayload }
  | { kind: "fetch"; payload: FetchPayload };

/** A unit's row holds what this version cannot read: it fails its task at once, naming why. */
export class CorruptUnit extends Error {
  override name = "CorruptUnit";
}

function read<T>(schema: z.ZodMiniType<T>, unit: { id: number; kind: string }, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join(".") : "payload";
  throw new CorruptUnit(
    `task unit ${unit.id} (${unit.kind}) holds a payload that cannot be read: ${where}: ${issue?.message ?? "invalid"}`,
  );
}

/** Reads a unit's row into its kind's payload; throws CorruptUnit for a kind or payload it cannot read. */
export function parseUnit(unit: { id: number; kind: string; payload: unknown }): UnitPayload {
  switch (unit.kind) {
    case "copy":
      return { kind: "copy", payload: read(Copy, unit, unit.payload) };
    case "files":
      return { kind: "files", payload: read(Files, unit, unit.payload) };
    case "remove":
      return { kind: "remove", payload: read(Remove, unit, unit.payload) };
    case "fetch":
      return { kind: "fetch", payload: read(Fetch, unit, unit.payload) };
    default:
      throw new CorruptUnit(`task unit ${unit.id} has a kind this version does not run: ${unit.kind}`);
  }
}

/** The bytes of a unit that stay written whatever happens to its run: parts stored, small files done. */
export function committedBytes(work: UnitPayload): number {
  if (work.kind === "files") {
    const done = new Set(work.payload.done ?? []);
    return work.payload.files.reduce((sum, file) => sum + (done.has(file.name) ? file.size : 0), 0);
  }
  if (work.kind === "remove") return 0;
  const parted = work.payload.parted;
  return parted ? parted.tags.length * parted.partBytes : 0;
}

/** The first unit of a task, rebuilt from the task's payload (`unit` names its kind; a retry starts there). */
export function firstUnitOf(task: { payload: Record<string, unknown> }): {
  kind: string;
  payload: Record<string, unknown>;
} {
  const { unit, ...payload } = task.payload;
  // A payload without a kind gives a unit the claim fails, naming it.
  return { kind: typeof unit === "string" ? unit : "", payload };
}

/** The paths a task's request named, which its creator is held to (D15.10); null where it names none. */
export function taskPaths(task: { payload: Record<string, unknown> }): { from: string | null; toDir: string | null } {
  const { from, toDir } = task.payload;
  return { from: typeof from === "string" ? from : null, toDir: typeof toDir === "string" ? toDir : null };
}
