// Every query of the storage group. Each endpoint reads in one batch and writes in one more at most;
// the status a driver check finds is written on its own, after the check.
import { and, asc, eq, getTableColumns, inArray, ne, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { keptQuery } from "../../db/kept.ts";
import { plan } from "../../db/plan.ts";
import { roles, storages, users } from "../../db/schema.ts";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "../../auth/roles.ts";
import type { MountedStorage } from "../../drivers/types.ts";
import { allDrivers } from "../../drivers/index.ts";
import { firstSegmentSql } from "./segment.ts";
import type { StorageValues } from "./wire.ts";

const DISABLED_STATUS = "disabled";

const mounted = {
  id: storages.id,
  mountPath: storages.mountPath,
  disabled: storages.disabled,
  status: storages.status,
};

/** More paths than one statement should bind (SQLite's limit is 32,766 parameters). */
const MAX_LISTED_MOUNT_PATHS = 1_000;

/**
 * The storages mounted at these exact paths, for the checks of drivers that point into others.
 * Past MAX_LISTED_MOUNT_PATHS it reads every storage instead: the checks pick by path themselves.
 */
const mountedAt = (db: Database, mountPaths: string[]) =>
  db
    .select(mounted)
    .from(storages)
    .where(mountPaths.length > MAX_LISTED_MOUNT_PATHS ? undefined : inArray(storages.mountPath, mountPaths));

/**
 * A storage as AList's JSON, built by SQLite: a page of fifty storages is one text value to pass
 * on, not 1,250 values to decode, map and encode again. The columns are AList's fields, named
 * and ordered as its Go struct; flags are JSON booleans and `modified` is RFC 3339 in UTC with
 * milliseconds, as Date.toISOString() writes it.
 */
function storageJson(s: typeof storages) {
  const fields = Object.entries(getTableColumns(storages)).map(([key, column]) => {
    const value = s[key as keyof typeof storages.$inferSelect];
    const json =
      column === storages.modifiedAtMs
        ? sql`strftime('%Y-%m-%dT%H:%M:%S', ${value} / 1000, 'unixepoch') || printf('.%03dZ', ${value} % 1000)`
        : column.dataType === "boolean"
          ? sql`json(iif(${value}, 'true', 'false'))`
          : value;
    return sql`'${sql.raw(column.name)}', ${json}`;
  });
  return sql<string>`json_object(${sql.join(fields, sql`, `)})`;
}

/** `{"content": [...], "total": n}` of one page in `order`, then `id` order; limit -1 is every row. */
const storagePageJson = keptQuery(["limit", "offset"], (db, v) => {
  const page = db
    .select()
    .from(storages)
    .orderBy(asc(storages.order), asc(storages.id))
    .limit(v.limit)
    .offset(v.offset)
    .as("storages");
  // The page is a subquery with the table's own columns; drizzle types it apart from the table.
  const listed = page as unknown as typeof storages;
  return db
    .select({
      json: sql<string>`json_object('content', json_group_array(json(${storageJson(listed)}) ORDER BY ${listed.order}, ${listed.id}), 'total', (SELECT count(*) FROM ${storages}))`,
    })
    .from(page);
});

/** Enabled storages no check has seen (status ""): the one a fresh `npm start` mounts, an import's. */
const uncheckedStorages = keptQuery([], (db) =>
  db
    .select()
    .from(storages)
    .where(and(eq(storages.disabled, false), eq(storages.status, ""))),
);

/**
 * One page as the list's `data` JSON (`limit` null means every row: AList's per_page < 1), and the
 * enabled storages never checked, which the list checks before it answers (none, nearly always).
 */
export function storagePage(db: Database, window: { limit: number | null; offset: number }) {
  return plan(
    [storagePageJson(db, { limit: window.limit ?? -1, offset: window.offset }), uncheckedStorages(db, {})],
    ([[page], unchecked]) => ({ json: page!.json, unchecked }),
  );
}

const storageJsonById = keptQuery(["id"], (db, v) =>
  db
    .select({ json: storageJson(storages) })
    .from(storages)
    .where(eq(storages.id, v.id)),
);

/** A storage as its wire JSON; undefined when there is none. */
export function storageJsonOf(db: Database, id: number) {
  return plan([storageJsonById(db, { id })], ([[row]]) => row?.json);
}

/** Drivers whose check reads the storages they point into (Alias, Crypt). */
const POINTING_DRIVERS = allDrivers()
  .filter((driver) => driver.pointsInto !== undefined)
  .map((driver) => driver.config.name);

/**
 * A storage and, when its driver points into others, every mounted storage as one JSON array of
 * [id, mount_path, disabled, status] (null otherwise: the condition is a constant SQLite tests
 * once, so other drivers read nothing more). What enable needs for its check in the guard's batch,
 * before the storage's paths are known.
 */
export function storageWithMounts(db: Database, id: number) {
  const pointing = sql`(SELECT ${storages.driver} FROM ${storages} WHERE ${storages.id} = ${id}) IN ${POINTING_DRIVERS}`;
  return plan(
    [
      db.select().from(storages).where(eq(storages.id, id)),
      db
        .select({
          json: sql<string>`json_group_array(json_array(${storages.id}, ${storages.mountPath}, ${storages.disabled}, ${storages.status}))`,
        })
        .from(storages)
        .where(pointing),
    ],
    ([[row], [mounts]]) => ({
      row,
      mounted:
        row && POINTING_DRIVERS.includes(row.driver)
          ? (JSON.parse(mounts!.json) as [number, string, number, string][]).map(
              ([id, mountPath, disabled, status]) => ({ id, mountPath, disabled: disabled === 1, status }),
            )
          : [],
    }),
  );
}

export async function readMounted(db: Database, mountPaths: string[]): Promise<MountedStorage[]> {
  return mountPaths.length === 0 ? [] : mountedAt(db, mountPaths);
}

/**
 * What a create or an update reads before the driver check, in the guard's batch: the storage
 * being changed (its driver and whether it is disabled; none for a create), whether another one
 * holds the mount path, and the storages the check of a driver that points into others needs.
 */
export function changeReads(db: Database, id: number | null, mountPath: string, mountPaths: string[]) {
  return plan(
    [
      db
        .select({ driver: storages.driver, disabled: storages.disabled })
        .from(storages)
        .where(eq(storages.id, id ?? 0)),
      db
        .select({ id: storages.id })
        .from(storages)
        .where(and(eq(storages.mountPath, mountPath), ne(storages.id, id ?? 0))),
      mountedAt(db, mountPaths),
    ],
    ([[current], [holder], others]) => ({
      current,
      mountPathTaken: holder !== undefined,
      mounted: others.filter((s) => s.id !== id),
    }),
  );
}

/** Inserts a storage with the status its check found (a mount path taken meanwhile throws the UNIQUE violation). */
export async function insertStorage(db: Database, values: StorageValues, disabled: boolean, status: string) {
  const [created] = await db
    .insert(storages)
    .values({ ...values, disabled, status: disabled ? DISABLED_STATUS : status })
    .returning({ id: storages.id });
  return created!.id;
}

/**
 * Saves the storage, with the status its check found, if it still exists with the same driver
 * (false otherwise), role scopes following a new mount path in the same batch. `disabled`
 * undefined keeps the current value; a disabled storage's status reads `disabled`.
 */
export async function updateStorage(
  db: Database,
  id: number,
  values: StorageValues,
  disabled: boolean | undefined,
  status: string,
): Promise<boolean> {
  const nowDisabled = disabled === undefined ? storages.disabled : sql`${disabled ? 1 : 0}`;
  const [, updated] = await db.batch([
    moveRoleScopes(db, id, values.driver, values.mountPath),
    db
      .update(storages)
      .set({
        ...values,
        ...(disabled === undefined ? {} : { disabled }),
        status: sql`CASE WHEN ${nowDisabled} THEN ${DISABLED_STATUS} ELSE ${status} END`,
      })
      .where(and(eq(storages.id, id), eq(storages.driver, values.driver)))
      .returning({ id: storages.id }),
  ]);
  return updated.length > 0;
}

/**
 * When a storage moves, role scopes that pointed at its old mount path (or inside it) follow it,
 * as AList does. Runs before the storage's own update, in the same batch: if that update fails
 * (a taken mount path), the batch rolls back and the roles stay as they were. The admin and guest
 * roles are left alone, and so is a storage at `/`, whose scope `/` means the whole tree.
 */
function moveRoleScopes(db: Database, id: number, driver: string, newPath: string) {
  const old = sql`(SELECT ${storages.mountPath} FROM ${storages} WHERE ${storages.id} = ${id} AND ${storages.driver} = ${driver} AND ${storages.mountPath} NOT IN ('/', ${newPath}))`;
  const path = sql`json_extract(scope.value, '$.path')`;
  const inside = sql`(${path} = ${old} OR substr(${path}, 1, length(${old}) + 1) = ${old} || '/')`;
  return db.run(sql`
    UPDATE ${roles} SET permission_scopes = (
      SELECT json_group_array(json_object(
        'path', CASE WHEN ${inside} THEN ${newPath} || substr(${path}, length(${old}) + 1) ELSE ${path} END,
        'permission', json_extract(scope.value, '$.permission')))
      FROM json_each(${roles.permissionScopes}) AS scope)
    WHERE ${roles.id} NOT IN (${GUEST_ROLE_ID}, ${ADMIN_ROLE_ID})
      AND EXISTS (SELECT 1 FROM json_each(${roles.permissionScopes}) AS scope WHERE ${inside})`);
}

/** The status a check found; a storage disabled meanwhile keeps `disabled`. */
export async function saveStatus(db: Database, id: number, status: string) {
  await db
    .update(storages)
    .set({ status })
    .where(and(eq(storages.id, id), eq(storages.disabled, false)));
}

/** Enabled, with the status its check found. */
export async function saveEnabled(db: Database, id: number, status: string) {
  await db.update(storages).set({ disabled: false, status }).where(eq(storages.id, id));
}

/** Disables an enabled storage; `found` false for an unknown id, `changed` false when it was disabled already. */
export async function saveDisabled(db: Database, id: number) {
  const [[row], changed] = await db.batch([
    db.select({ id: storages.id }).from(storages).where(eq(storages.id, id)),
    db
      .update(storages)
      .set({ disabled: true, status: DISABLED_STATUS })
      .where(and(eq(storages.id, id), eq(storages.disabled, false)))
      .returning({ id: storages.id }),
  ]);
  return { found: row !== undefined, changed: changed.length > 0 };
}

/** Every storage, for load_all. */
export async function readAllStorages(db: Database) {
  return db.select().from(storages).orderBy(asc(storages.order), asc(storages.id));
}

/**
 * The storage and who may still use its first mount segment: roles with a scope path and users with
 * a base path containing that segment. The caller compares segments exactly; SQL only narrows.
 */
export function storageUsage(db: Database, id: number) {
  const segment = sql`(SELECT ${firstSegmentSql(storages.mountPath)} FROM ${storages} WHERE ${storages.id} = ${id})`;
  return plan(
    [
      db.select({ mountPath: storages.mountPath }).from(storages).where(eq(storages.id, id)),
      db
        .select({ name: roles.name, scopes: roles.permissionScopes })
        .from(roles)
        .where(
          and(
            ne(segment, ""),
            sql`EXISTS (SELECT 1 FROM json_each(${roles.permissionScopes}) WHERE instr(json_extract(json_each.value, '$.path'), ${segment}) > 0)`,
          ),
        )
        .orderBy(asc(roles.id)),
      db
        .select({ username: users.username, basePath: users.basePath })
        .from(users)
        .where(and(ne(segment, ""), sql`instr(${users.basePath}, ${segment}) > 0`))
        .orderBy(asc(users.id)),
    ],
    ([[storage], roleRows, userRows]) => ({ storage, roles: roleRows, users: userRows }),
  );
}

export async function deleteStorage(db: Database, id: number) {
  await db.delete(storages).where(eq(storages.id, id));
}
