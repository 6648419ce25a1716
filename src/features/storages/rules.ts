// What the admin API may do to a storage: the refusals of each change and what its driver check
// means for the reply (AList v3.58.0 server/handles/storage.go, docs/decisions.md D4.7-D4.8). Each
// decision takes plain inputs (the parsed body, what the route's plan read) and returns data or
// throws the refusal (ApiError) the wire answers; the checks themselves are checks.ts, the queries
// store.ts.
import type { Database } from "../../db/client.ts";
import { driverNotFound, findDriver } from "../../drivers/index.ts";
import { WORKING, type Driver, type MountedStorage } from "../../drivers/types.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { checkRow, checkStorage } from "./checks.ts";
import {
  ALREADY_DISABLED,
  ALREADY_ENABLED,
  createdButFailed,
  DRIVER_UNCHANGEABLE,
  enabledButFailed,
  mountPathTaken,
  savedButFailed,
  STORAGE_NOT_FOUND,
  storageInUse,
} from "./messages.ts";
import { firstSegment } from "./segment.ts";
import { deleteStorage, insertStorage, saveDisabled, saveEnabled, updateStorage, type storageUsage } from "./store.ts";
import { storageValues, type StorageBodyInput, type StorageRow, type StorageValues } from "./wire.ts";

/** The storage a read found; a missing one is the 404 every storage route answers. */
export function foundStorage<T>(row: T | undefined): T {
  if (!row) throw new ApiError(404, STORAGE_NOT_FOUND);
  return row;
}

function knownDriver(name: string): Driver {
  const driver = findDriver(name);
  if (!driver) throw new ApiError(400, driverNotFound(name));
  return driver;
}

/** A create or update body read as a storage of a known driver, before anything is read or checked. */
export interface StorageDraft {
  driver: Driver;
  values: StorageValues;
  /** Absent: a create starts enabled, an update keeps the current value. */
  disabled: boolean | undefined;
}

/** 400 for an unknown driver, an addition that is not an object, or a choice outside the driver's options. */
export function storageDraft(body: StorageBodyInput, nowMs: number): StorageDraft {
  const driver = knownDriver(body.driver);
  return { driver, values: storageValues(body, driver, nowMs), disabled: body.disabled ?? undefined };
}

/** What a delete read: the storage's mount path and who may use it (store.ts `storageUsage`). */
type StorageUsage = ReturnType<ReturnType<typeof storageUsage>["read"]>;

/** What a create or update read before its check (store.ts `changeReads`). */
export interface ChangeReads {
  current: { driver: string; disabled: boolean } | undefined;
  mountPathTaken: boolean;
  mounted: MountedStorage[];
}

/**
 * Mounts the storage and returns its id. It is checked before it is saved, so the row is written
 * once, with its status; a failed check still creates it (AList's reply kept: code 500 with its id).
 */
export async function createStorage(db: Database, draft: StorageDraft, reads: ChangeReads): Promise<number> {
  const { driver, values } = draft;
  const disabled = draft.disabled ?? false;
  if (reads.mountPathTaken) throw new ApiError(400, mountPathTaken(values.mountPath));
  const status = disabled ? "" : await checkStorage(driver, values.addition, reads.mounted);
  const id = await refuseDuplicate(mountPathTaken(values.mountPath), insertStorage(db, values, disabled, status));
  if (!disabled && status !== WORKING) throw new ApiError(500, createdButFailed(status), { id });
  return id;
}

/** Saves storage `id` (same driver) and checks it again unless it is disabled. */
export async function changeStorage(db: Database, id: number, draft: StorageDraft, reads: ChangeReads): Promise<void> {
  const { driver, values } = draft;
  const current = foundStorage(reads.current);
  if (current.driver !== values.driver) throw new ApiError(400, DRIVER_UNCHANGEABLE);
  if (reads.mountPathTaken) throw new ApiError(400, mountPathTaken(values.mountPath));
  const disabled = draft.disabled ?? current.disabled;
  const status = disabled ? "" : await checkStorage(driver, values.addition, reads.mounted);
  const saved = await refuseDuplicate(
    mountPathTaken(values.mountPath),
    updateStorage(db, id, values, draft.disabled, status),
  );
  // Deleted, or its driver changed, while it was checked.
  if (!saved) throw new ApiError(404, STORAGE_NOT_FOUND);
  if (!disabled && status !== WORKING) throw new ApiError(500, savedButFailed(status), { id });
}

/**
 * Who still uses the storage: roles with a scope and users with a base path under its first
 * mount segment (AList v3.58.0 internal/op/storage.go:282-300). A storage mounted at / has no
 * segment, so nobody.
 */
function usersOf(mountPath: string, usage: StorageUsage): string[] {
  const segment = firstSegment(mountPath);
  if (segment === "") return [];
  return [
    ...usage.roles
      .filter((role) => role.scopes.some((scope) => firstSegment(scope.path) === segment))
      .map((role) => `role:${role.name}`),
    ...usage.users.filter((user) => firstSegment(user.basePath) === segment).map((user) => `user:${user.username}`),
  ];
}

/** Deletes storage `id` unless something still uses it (`usage`, read by the route's plan). */
export async function removeStorage(db: Database, id: number, usage: StorageUsage): Promise<void> {
  const { mountPath } = foundStorage(usage.storage);
  const usedBy = usersOf(mountPath, usage);
  if (usedBy.length > 0) throw new ApiError(400, storageInUse(usedBy));
  await deleteStorage(db, id);
}

/** Enables a disabled storage and checks it; it stays enabled when the check fails (AList). */
export async function enableStorage(
  db: Database,
  reads: { row: StorageRow | undefined; mounted: MountedStorage[] },
): Promise<void> {
  const storage = foundStorage(reads.row);
  if (!storage.disabled) throw new ApiError(400, ALREADY_ENABLED);
  const status = await checkRow(db, storage, reads.mounted);
  await saveEnabled(db, storage.id, status);
  if (status !== WORKING) throw new ApiError(500, enabledButFailed(status));
}

export async function disableStorage(db: Database, id: number): Promise<void> {
  const { found, changed } = await saveDisabled(db, id);
  if (!found) throw new ApiError(404, STORAGE_NOT_FOUND);
  if (!changed) throw new ApiError(400, ALREADY_DISABLED);
}
