// Every query of the admin role routes; each function is one round trip. The `default` flag and
// the `default_role` setting change in the same batch as the role, so they never disagree.
import { and, asc, count, eq, ne, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client.ts";
import { plan, tablePage } from "../../db/plan.ts";
import { roles, settings, users, type PermissionScope } from "../../db/schema.ts";
import { GUEST_ROLE_ID } from "../../auth/roles.ts";
import { settingDefinitionByKey } from "../../db/settings.ts";

export type RoleRow = typeof roles.$inferSelect;

/** What `default_role` reads when no role is flagged default: the seeded value (guest). */
const UNFLAGGED_DEFAULT_ROLE = settingDefinitionByKey.get("default_role")?.value ?? String(GUEST_ROLE_ID);
/** How many holders a refused delete names. */
const HOLDERS_NAMED = 5;

const isDefaultRole = (roleId: number | SQL) =>
  sql`EXISTS (SELECT 1 FROM ${roles} AS r WHERE r.id = ${roleId} AND r.is_default = 1)`;
const defaultRoleSetting = eq(settings.key, "default_role");

/**
 * Once the role is flagged default: clears the flag on every other role and points the
 * `default_role` setting at it (AList v3.58.0 internal/op/role.go:147-157). Conditioned on the
 * flag, so a refused write changes nothing here either.
 */
function becomeDefault(db: Database, roleId: number | SQL): BatchItem<"sqlite">[] {
  return [
    db
      .update(roles)
      .set({ isDefault: false })
      .where(and(ne(roles.id, roleId), isDefaultRole(roleId))),
    // A number parameter may arrive as a REAL (4.0), so a known id is turned into text here.
    db
      .update(settings)
      .set({ value: typeof roleId === "number" ? String(roleId) : sql`CAST(${roleId} AS TEXT)` })
      .where(and(defaultRoleSetting, isDefaultRole(roleId))),
  ];
}

/** Once the role is no longer flagged default: `default_role` stops naming it. */
function stopBeingDefault(db: Database, roleId: number): BatchItem<"sqlite"> {
  return db
    .update(settings)
    .set({ value: UNFLAGGED_DEFAULT_ROLE })
    .where(and(defaultRoleSetting, eq(settings.value, String(roleId)), sql`NOT ${isDefaultRole(roleId)}`));
}

/** Users whose role list holds `roleId`. */
const holdsRole = (roleId: number) => sql`EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${roleId})`;

export const rolePage = (db: Database, window: { limit: number; offset: number }) => tablePage(db, roles, window);

export function roleById(db: Database, id: number) {
  return plan([db.select().from(roles).where(eq(roles.id, id))], ([[role]]): RoleRow | undefined => role);
}

export interface RoleFields {
  name: string;
  description: string;
  isDefault: boolean;
  permissionScopes: PermissionScope[];
}

/** Inserts the role; a taken name throws a UNIQUE violation and the whole batch is undone. */
export async function insertRole(db: Database, role: RoleFields): Promise<RoleRow> {
  const newId = sql`(SELECT ${roles.id} FROM ${roles} WHERE ${roles.name} = ${role.name})`;
  const results = await db.batch([
    db.insert(roles).values(role),
    ...(role.isDefault ? becomeDefault(db, newId) : []),
    db.select().from(roles).where(eq(roles.name, role.name)),
  ] as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  return (results.at(-1) as RoleRow[])[0]!;
}

/**
 * Applies the fields given (absent ones stay). The guest role keeps its name: a rename of it
 * writes nothing. Returns whether the row changed and the role as it now is.
 */
export async function updateRole(
  db: Database,
  id: number,
  change: Partial<RoleFields>,
): Promise<{ written: boolean; role: RoleRow | undefined }> {
  const update = db
    .update(roles)
    .set({
      name: change.name ?? sql`${roles.name}`,
      ...(change.description !== undefined && { description: change.description }),
      ...(change.isDefault !== undefined && { isDefault: change.isDefault }),
      ...(change.permissionScopes !== undefined && { permissionScopes: change.permissionScopes }),
    })
    .where(
      and(
        eq(roles.id, id),
        change.name === undefined
          ? undefined
          : sql`(${roles.id} <> ${GUEST_ROLE_ID} OR ${roles.name} = ${change.name})`,
      ),
    );
  const flag =
    change.isDefault === undefined ? [] : change.isDefault ? becomeDefault(db, id) : [stopBeingDefault(db, id)];
  const results = await db.batch([update, ...flag, db.select().from(roles).where(eq(roles.id, id))] as [
    BatchItem<"sqlite">,
    ...BatchItem<"sqlite">[],
  ]);
  const { rowsAffected } = results[0] as { rowsAffected: number };
  return { written: rowsAffected > 0, role: (results.at(-1) as RoleRow[])[0] };
}

/**
 * Deletes the role unless a user holds it; then the first HOLDERS_NAMED holders and their count
 * come back instead. A deleted default role hands `default_role` back to the seeded value.
 */
export async function deleteRole(db: Database, id: number) {
  const [[role], named, [held], removed] = await db.batch([
    db.select().from(roles).where(eq(roles.id, id)),
    db
      .select({ username: users.username })
      .from(users)
      .where(holdsRole(id))
      .orderBy(asc(users.id))
      .limit(HOLDERS_NAMED),
    db.select({ total: count() }).from(users).where(holdsRole(id)),
    db.delete(roles).where(and(eq(roles.id, id), sql`NOT EXISTS (SELECT 1 FROM ${users} WHERE ${holdsRole(id)})`)),
    db
      .update(settings)
      .set({ value: UNFLAGGED_DEFAULT_ROLE })
      .where(and(defaultRoleSetting, eq(settings.value, String(id)), sql`changes() = 1`)),
  ]);
  return {
    role,
    deleted: removed.rowsAffected > 0,
    holders: named.map((h) => h.username),
    holderCount: held?.total ?? 0,
  };
}
