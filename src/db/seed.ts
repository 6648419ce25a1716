// First-run data and metadata repair (docs/decisions.md D5). Idempotent: a second run on an unchanged
// database writes nothing. Reads everything it compares in one batch, writes in one batch.
import { eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { hashStaticHash, staticHash } from "../auth/password.ts";
import { newPermanentToken, randomAlphanumeric } from "../auth/random.ts";
import { ADMIN_ROLE_ID, ALL_PERMISSIONS, GUEST_ROLE_ID } from "../auth/roles.ts";
import type { Database } from "./client.ts";
import { roles, settings, storages, users, type PermissionScope } from "./schema.ts";
import { ALIST_COMPATIBLE_VERSION, SETTING_DEFINITIONS, SettingFlag } from "./settings.ts";

const BUILT_IN_ROLES: { id: number; name: string; description: string; permissionScopes: PermissionScope[] }[] = [
  { id: GUEST_ROLE_ID, name: "guest", description: "Guest", permissionScopes: [{ path: "/", permission: 0 }] },
  {
    id: ADMIN_ROLE_ID,
    name: "admin",
    description: "Administrator",
    permissionScopes: [{ path: "/", permission: ALL_PERMISSIONS }],
  },
];

/**
 * The storage a fresh `npm start` mounts, so a newcomer can store files at once: the Worker's own R2
 * bucket (wrangler.toml's BUCKET binding, kept under DATA_DIR) at "/" (docs/decisions.md D5.1).
 */
export const DEFAULT_STORAGE = {
  mountPath: "/",
  driver: "R2 Binding",
  addition: JSON.stringify({ binding: "BUCKET", root_folder_path: "/", placeholder: "" }),
  remark: "The Worker's own R2 bucket (binding BUCKET in wrangler.toml), made by the first npm start",
} as const;

export interface SeedOptions {
  adminPassword?: string | undefined;
  /** Mount DEFAULT_STORAGE on a fresh install (the run that creates the admin); npm start asks for it. */
  defaultStorage?: boolean;
}

export interface SeedReport {
  /** The admin's first password when this run created the admin, otherwise null. */
  adminPassword: string | null;
  rolesAdded: number;
  usersAdded: number;
  settingsAdded: number;
  settingsRepaired: number;
  settingsDeprecated: number;
  storagesAdded: number;
}

export async function seed(db: Database, options: SeedOptions = {}): Promise<SeedReport> {
  const [existingRoles, existingUsers, existingSettings] = await db.batch([
    db
      .select({ id: roles.id })
      .from(roles)
      .where(inArray(roles.id, [GUEST_ROLE_ID, ADMIN_ROLE_ID])),
    // The admin and the guest are the accounts holding those roles, whatever they are called now.
    db
      .select({ roleIds: users.roleIds })
      .from(users)
      .where(
        sql`EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value IN (${GUEST_ROLE_ID}, ${ADMIN_ROLE_ID}))`,
      ),
    db.select().from(settings),
  ]);

  const writes: BatchItem<"sqlite">[] = [];
  const report: SeedReport = {
    adminPassword: null,
    rolesAdded: 0,
    usersAdded: 0,
    settingsAdded: 0,
    settingsRepaired: 0,
    settingsDeprecated: 0,
    storagesAdded: 0,
  };

  const roleIds = new Set(existingRoles.map((r) => r.id));
  for (const role of BUILT_IN_ROLES.filter((r) => !roleIds.has(r.id))) {
    writes.push(db.insert(roles).values(role).onConflictDoNothing());
    report.rolesAdded++;
  }

  const heldRoles = new Set(existingUsers.flatMap((u) => u.roleIds));
  if (!heldRoles.has(GUEST_ROLE_ID)) {
    // AList's guest: password "guest", disabled until an admin turns anonymous access on.
    const passwordHash = await hashStaticHash(await staticHash("guest"));
    writes.push(
      db
        .insert(users)
        .values({ username: "guest", passwordHash, roleIds: [GUEST_ROLE_ID], disabled: true })
        .onConflictDoNothing(),
    );
    report.usersAdded++;
  }
  let adminInsert: number | null = null;
  if (!heldRoles.has(ADMIN_ROLE_ID)) {
    const password = options.adminPassword || randomAlphanumeric(16);
    const passwordHash = await hashStaticHash(await staticHash(password));
    adminInsert = writes.length;
    writes.push(
      db
        .insert(users)
        .values({
          username: "admin",
          passwordHash,
          roleIds: [ADMIN_ROLE_ID],
          permission: ALL_PERMISSIONS,
          basePath: "/",
        })
        .onConflictDoNothing(),
    );
    report.adminPassword = password;
    report.usersAdded++;
    // Only with the first admin: a later run never brings back a default storage an admin deleted.
    if (options.defaultStorage) {
      writes.push(
        db
          .insert(storages)
          .values({ ...DEFAULT_STORAGE, modifiedAtMs: Date.now() })
          .onConflictDoNothing(),
      );
      report.storagesAdded++;
    }
  }

  const stored = new Map(existingSettings.map((s) => [s.key, s]));
  SETTING_DEFINITIONS.forEach((definition, index) => {
    const current = stored.get(definition.key);
    const metadata = {
      help: definition.help,
      type: definition.type,
      options: definition.options,
      group: definition.group,
      flag: definition.flag,
      index,
    };
    if (!current) {
      const value = definition.key === "token" ? newPermanentToken() : definition.value;
      writes.push(
        db
          .insert(settings)
          .values({ key: definition.key, value, ...metadata })
          .onConflictDoNothing(),
      );
      report.settingsAdded++;
      return;
    }
    // The compatible version always wins; every other value is the operator's to keep.
    const value = definition.key === "version" ? ALIST_COMPATIBLE_VERSION : current.value;
    const drifted =
      value !== current.value ||
      (Object.keys(metadata) as (keyof typeof metadata)[]).some((k) => current[k] !== metadata[k]);
    if (drifted) {
      writes.push(
        db
          .update(settings)
          .set({ value, ...metadata })
          .where(eq(settings.key, definition.key)),
      );
      report.settingsRepaired++;
    }
  });
  const known = new Set(SETTING_DEFINITIONS.map((d) => d.key));
  for (const row of existingSettings) {
    if (!known.has(row.key) && row.flag !== SettingFlag.DEPRECATED) {
      writes.push(db.update(settings).set({ flag: SettingFlag.DEPRECATED }).where(eq(settings.key, row.key)));
      report.settingsDeprecated++;
    }
  }

  if (writes.length === 0) return report;
  const results = (await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as {
    rowsAffected?: number;
  }[];
  if (adminInsert !== null && results[adminInsert]?.rowsAffected === 0) {
    // Someone else holds the username "admin": no admin was made, so no password to print.
    throw new Error(
      'no user holds the admin role and the username "admin" is taken; give the admin role back to an account by hand',
    );
  }
  return report;
}
