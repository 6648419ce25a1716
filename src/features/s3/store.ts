// Every query of the S3 endpoint: the key named by its access key id, its user and roles (the
// guard's batch, auth/store.ts), with the file side's metas and settings, in ONE round trip. The
// key's folder is known only once the key is read, so the storages under it come with the first
// listing or lookup (the mount tree reads what it lacks: a second round trip, docs/decisions.md D22.3).
import type { Database } from "../../db/client.ts";
import { readS3KeyCaller, reserveAttempt } from "../../auth/store.ts";
import { fsStateReads } from "../fs/store.ts";

export async function readS3Request(
  db: Database,
  read: { accessKeyId: string; ip: string; now: number; touch: number | null },
) {
  const fs = fsStateReads(db, { paths: [], folders: [] });
  const found = await readS3KeyCaller(db, read, fs.reads);
  return { ...found, fs: fs.toState(found.extra) };
}

/** A wrong key id or signature counts toward the sign-in lockout of the address (D16.6). */
export const countFailure = (db: Database, ip: string, now: number) => reserveAttempt(db, "ip", ip, now);
