// The one hook the file side offers the features built on it. A write route notes what it changed
// (the search index keeps itself up to date from those notes, features/search/changes.ts) and
// hands a copy or move between two storages over as a background task (features/tasks/start.ts).
// src/app.ts composes the two and passes them to the write routes when it registers them: the file
// side imports neither feature.
import type { Caller } from "../../auth/caller.ts";
import type { Database } from "../../db/client.ts";
import type { Env } from "../../env.ts";
import type { Mounted } from "./mounts.ts";
import type { FsState } from "./state.ts";

/** One request's changes, noted once each upstream call succeeded, written together at its end. */
interface WriteLog {
  /** A file uploaded or a folder made. */
  added(path: string, isDir: boolean, size: number): void;
  removed(path: string): void;
  /** A rename or a move: what was below `from` is now below `to`. */
  moved(from: string, to: string): void;
  copied(from: string, to: string): void;
  /** Writes what was noted; a failure there never fails the request (the upstream change stands). */
  flush(): Promise<void>;
}

/** Who asks for a transfer, and what the file side read for the request. */
export interface WriteRequest {
  db: Database;
  env: Env;
  caller: Caller;
  state: FsState;
}

/** A copy or move of `name` from full path `from` into folder `toDir`, on another storage. */
export interface Transfer {
  kind: "copy" | "move";
  from: string;
  toDir: string;
  name: string;
  source: Mounted;
  target: Mounted;
}

export interface FileWrites {
  /** The log of one request's changes, over the state its route read. */
  log(db: Database, state: FsState): WriteLog;
  /** Starts `transfer` in the background; answers the task as the reply lists it (`{tasks: [...]}`). */
  transfer(request: WriteRequest, transfer: Transfer): Promise<object>;
}
