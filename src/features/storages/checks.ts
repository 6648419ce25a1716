// Checking storages against their drivers: one row (enable), and every enabled row in the
// background (load_all), storages that others point into before the ones that point.
import type { Database } from "../../db/client.ts";
import { checkStorage, errorText, mountsToRead } from "../../drivers/check.ts";
import { driverNotFound, findDriver } from "../../drivers/index.ts";
import type { MountedStorage } from "../../drivers/types.ts";
import { readMounted, saveStatus } from "./store.ts";
import type { StorageRow } from "./wire.ts";

/** How many checks load_all runs at once. */
export const RECHECK_CONCURRENCY = 4;

/** The status `row` gets from its driver's check, reading the storages it points into when it needs them. */
export async function checkRow(db: Database, row: Pick<StorageRow, "id" | "driver" | "addition">): Promise<string> {
  const driver = findDriver(row.driver);
  if (!driver) return driverNotFound(row.driver);
  const mounted = await readMounted(db, mountsToRead(driver, row.addition));
  return checkStorage(driver, row.addition, mounted.filter((s) => s.id !== row.id));
}

/**
 * Re-checks every enabled storage, RECHECK_CONCURRENCY at a time, writing each status that changed.
 * Alias and Crypt go last, so they see the fresh statuses of the storages they point into.
 */
export async function recheckAll(db: Database, rows: StorageRow[]): Promise<void> {
  const mounted = new Map<number, MountedStorage>(rows.map(({ id, mountPath, disabled, status }) => [id, { id, mountPath, disabled, status }]));
  const enabled = rows.filter((row) => !row.disabled);
  const pointing = (row: StorageRow) => findDriver(row.driver)?.pointsInto !== undefined;
  const recheck = async (row: StorageRow) => {
    const driver = findDriver(row.driver);
    const others = driver?.pointsInto ? [...mounted.values()].filter((s) => s.id !== row.id) : [];
    const status = driver ? await checkStorage(driver, row.addition, others) : driverNotFound(row.driver);
    mounted.get(row.id)!.status = status;
    if (status === row.status) return;
    await saveStatus(db, row.id, status).catch((error: unknown) =>
      console.error(JSON.stringify({ loadAll: "status not saved", storage: row.id, error: errorText(error) })),
    );
  };
  await eachAtMost(RECHECK_CONCURRENCY, enabled.filter((row) => !pointing(row)), recheck);
  await eachAtMost(RECHECK_CONCURRENCY, enabled.filter(pointing), recheck);
}

async function eachAtMost<T>(concurrency: number, items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
