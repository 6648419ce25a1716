// The cron job's part of chunked uploads (docs/decisions.md D11.1): sessions idle past their time
// are aborted upstream (S3's parts, a staging folder) and deleted; completed ones kept for
// `status` are deleted. A bounded batch per run; an upstream that fails keeps its session for the
// next run, unless its storage is gone (nothing left to abort).
import { readAddition } from "../../drivers/addition.ts";
import { findDriver } from "../../drivers/index.ts";
import type { Database } from "../../db/client.ts";
import { MountTree, type Mounted } from "../fs/mounts.ts";
import { baseName } from "../fs/path.ts";
import { partsOf } from "../fs/staged-parts.ts";
import type { StorageRow } from "../fs/tree.ts";
import { deleteSession, lapsedSessions } from "./store.ts";

const SESSIONS_PER_RUN = 50;

export interface UploadSweep {
  aborted: number;
  removed: number;
  failed: number;
}

export async function sweepUploads(db: Database, now = Math.floor(Date.now() / 1000)): Promise<UploadSweep> {
  const report: UploadSweep = { aborted: 0, removed: 0, failed: 0 };
  for (const { session, storage } of await lapsedSessions(db, now, SESSIONS_PER_RUN)) {
    if (session.state !== "completed" && storage) {
      try {
        const mounted = mountedFor(db, storage, session.actualDir);
        await partsOf(mounted).abort({
          dir: session.actualDir,
          name: baseName(session.path),
          uploadId: session.upstreamId,
        });
        report.aborted++;
      } catch (error) {
        console.error(JSON.stringify({ sweep: "uploads", session: session.id, error: String(error) }));
        report.failed++;
        continue;
      }
    }
    await deleteSession(db, session.id);
    report.removed++;
  }
  return report;
}

/** The storage's backend outside a request: no caller, so no Alias hop is guarded (an Alias has no parts). */
function mountedFor(db: Database, storage: StorageRow, actualPath: string): Mounted {
  const driver = findDriver(storage.driver);
  if (!driver?.files) throw new Error(`driver ${storage.driver} cannot serve files at the edge`);
  const backend = driver.files({
    id: storage.id,
    mountPath: storage.mountPath,
    modified: new Date(storage.modifiedAtMs),
    addition: readAddition(driver, storage.addition),
    fs: new MountTree({ storages: [], chains: new Set(), virtual: new Map(), points: new Map() }, db),
  });
  return { storage, driver, backend, actualPath };
}
