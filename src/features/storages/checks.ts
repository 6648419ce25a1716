// Checking a storage: its driver's check, bounded in time, and the `status` it gives the storage,
// `work` or a sentence a person can act on (AList v3.58.0 internal/op/storage.go:120-158). The one
// place that runs checks: create and update (checkStorage), enable (checkRow), and every enabled
// row in the background (load_all: recheckAll), storages that others point into before the ones
// that point. The drivers (src/drivers) only say how to check; when and for how long is decided here.
import type { Database } from "../../db/client.ts";
import { parseAddition, readAddition } from "../../drivers/addition.ts";
import { errorText, seconds } from "../../drivers/failures.ts";
import { driverNotFound, findDriver } from "../../drivers/index.ts";
import { CheckFailed, WORKING, type Driver, type MountedStorage } from "../../drivers/types.ts";
import { cleanPath } from "../../lib/path.ts";
import { readMounted, saveStatus } from "./store.ts";
import type { StorageRow } from "./wire.ts";

const CHECK_TIMEOUT_MS = 5_000;
/** After the signal fires, how long a check gets to report in its own words before it is cut off. */
const GRACE_MS = 500;

/** The status a storage gets from its driver's check: `work` or the failure's text. Never throws. */
export async function checkStorage(
  driver: Driver,
  additionJson: string,
  storages: MountedStorage[],
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  let cutOff: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    cutOff = setTimeout(
      () => reject(new CheckFailed(`the check got no answer within ${seconds(timeoutMs)}`)),
      timeoutMs + GRACE_MS,
    );
  });
  try {
    const addition = readAddition(driver, additionJson);
    await Promise.race([driver.check(addition, { signal, timeoutMs, storages }), deadline]);
    return WORKING;
  } catch (error) {
    return errorText(error);
  } finally {
    clearTimeout(cutOff);
  }
}

/** No mount path is longer: `mount_path` takes at most 1024 characters, and cleaning may add a leading slash. */
const LONGEST_MOUNT_PATH = 1025;

/**
 * The mount paths a check must see for a storage of `driver` (every prefix of each path it points
 * into, up to the longest a mount path can be), so callers read just those rows; empty for drivers
 * that point nowhere. Built segment by segment: a path of many thousand segments costs linear time.
 */
export function mountsToRead(driver: Driver, additionJson: string): string[] {
  if (!driver.pointsInto || parseAddition(additionJson) === null) return [];
  const prefixes = new Set<string>();
  for (const path of driver.pointsInto(readAddition(driver, additionJson))) {
    prefixes.add("/");
    let prefix = "";
    for (const segment of cleanPath(path).split("/").filter(Boolean)) {
      prefix += `/${segment}`;
      if (prefix.length > LONGEST_MOUNT_PATH) break;
      prefixes.add(prefix);
    }
  }
  return [...prefixes];
}

/** How many checks load_all runs at once. */
const RECHECK_CONCURRENCY = 4;

/**
 * The status `row` gets from its driver's check, against the storages it points into: `mounted`
 * when the caller read them (any superset will do), else read here.
 */
export async function checkRow(
  db: Database,
  row: Pick<StorageRow, "id" | "driver" | "addition">,
  mounted?: MountedStorage[],
): Promise<string> {
  const driver = findDriver(row.driver);
  if (!driver) return driverNotFound(row.driver);
  const paths = mountsToRead(driver, row.addition);
  const candidates = mounted ?? (await readMounted(db, paths));
  const wanted = new Set(paths);
  return checkStorage(
    driver,
    row.addition,
    candidates.filter((s) => s.id !== row.id && wanted.has(s.mountPath)),
  );
}

/**
 * Re-checks every enabled storage, RECHECK_CONCURRENCY at a time, writing each status that changed.
 * Alias and Crypt go last, so they see the fresh statuses of the storages they point into.
 */
export async function recheckAll(db: Database, rows: StorageRow[]): Promise<void> {
  const mounted = new Map<number, MountedStorage>(
    rows.map(({ id, mountPath, disabled, status }) => [id, { id, mountPath, disabled, status }]),
  );
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
  await eachAtMost(
    RECHECK_CONCURRENCY,
    enabled.filter((row) => !pointing(row)),
    recheck,
  );
  await eachAtMost(RECHECK_CONCURRENCY, enabled.filter(pointing), recheck);
}

/**
 * Checks storages no check has seen yet (the one a fresh `npm start` mounts, whose seed runs in
 * Node without the Worker's bindings; an AList import's) and saves their statuses, pointing drivers
 * after the others, so the storage list shows a status like any checked storage's
 * (docs/decisions.md D5.1). Once per storage: a check never leaves the status empty.
 */
export async function checkUnchecked(db: Database, rows: StorageRow[]): Promise<void> {
  const pointing = (row: StorageRow) => findDriver(row.driver)?.pointsInto !== undefined;
  const check = async (row: StorageRow) => saveStatus(db, row.id, await checkRow(db, row));
  await eachAtMost(
    RECHECK_CONCURRENCY,
    rows.filter((row) => !pointing(row)),
    check,
  );
  await eachAtMost(RECHECK_CONCURRENCY, rows.filter(pointing), check);
}

async function eachAtMost<T>(concurrency: number, items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
