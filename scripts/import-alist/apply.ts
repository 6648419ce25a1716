// The database side of the import: the target's rows in one read batch, and the planned writes
// in one all-or-nothing batch per table group. Runs on any Drizzle libSQL database (Node or workerd).
import { and, eq, ne } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../src/db/client.ts";
import { metas, roles, settings, sshPublicKeys, storages, users } from "../../src/db/schema.ts";
import { GROUPS, type Group, type ImportPlan, type PlannedWrite, type TargetState, type TargetTable } from "./types.ts";

export async function readTarget(db: Database): Promise<TargetState> {
  const [userRows, roleRows, storageRows, metaRows, settingRows, keyRows] = await db.batch([
    db
      .select({
        id: users.id,
        username: users.username,
        passwordHash: users.passwordHash,
        passwordChangedAt: users.passwordChangedAt,
        basePath: users.basePath,
        roleIds: users.roleIds,
        disabled: users.disabled,
        permission: users.permission,
        otpSecret: users.otpSecret,
        ssoId: users.ssoId,
      })
      .from(users),
    db.select().from(roles),
    db.select().from(storages),
    db.select().from(metas),
    db.select({ key: settings.key, value: settings.value }).from(settings),
    db
      .select({
        id: sshPublicKeys.id,
        userId: sshPublicKeys.userId,
        title: sshPublicKeys.title,
        fingerprint: sshPublicKeys.fingerprint,
      })
      .from(sshPublicKeys),
  ]);
  return {
    users: userRows,
    roles: roleRows,
    storages: storageRows,
    metas: metaRows,
    settings: settingRows,
    sshKeys: keyRows,
  };
}

const TABLES = { users, roles, storages, metas, settings, sshPublicKeys } as const;

function statement(db: Database, write: PlannedWrite): BatchItem<"sqlite"> {
  if (write.kind === "clearDefaultRoles") {
    return db
      .update(roles)
      .set({ isDefault: false })
      .where(and(ne(roles.id, write.except), eq(roles.isDefault, true)));
  }
  const table = TABLES[write.table as TargetTable];
  if (write.kind === "insert") return db.insert(table).values(write.values as never);
  const key = write.table === "settings" ? settings.key : (table as typeof users).id;
  return db
    .update(table)
    .set(write.values as never)
    .where(eq(key, write.id as never));
}

/**
 * Writes each group in its own batch (a transaction): a failure leaves that group and the ones
 * after it unwritten, and names the group. The groups before it stay written, and are consistent
 * on their own (users with their roles and keys; storages; metas; settings).
 */
export async function applyPlan(db: Database, plan: ImportPlan): Promise<{ written: Record<Group, number> }> {
  const written = { identity: 0, storages: 0, metas: 0, settings: 0 };
  for (const group of GROUPS) {
    const writes = plan.writes[group];
    if (writes.length === 0) continue;
    const statements = writes.map((write) => statement(db, write));
    try {
      await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    } catch (error) {
      throw new Error(
        `writing the ${group} group failed, none of its ${writes.length} writes were made: ${(error as Error).message}`,
        { cause: error },
      );
    }
    written[group] = writes.length;
  }
  return { written };
}
