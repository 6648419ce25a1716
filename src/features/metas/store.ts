// Every query of the meta admin routes; each function is one round trip.
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { plan, tablePage } from "../../db/plan.ts";
import { metas } from "../../db/schema.ts";

export type MetaRow = typeof metas.$inferSelect;
export type MetaFields = Omit<MetaRow, "id">;

export const metaPage = (db: Database, window: { limit: number; offset: number }) => tablePage(db, metas, window);

export function metaById(db: Database, id: number) {
  return plan([db.select().from(metas).where(eq(metas.id, id))], ([[row]]): MetaRow | undefined => row);
}

export async function insertMeta(db: Database, fields: MetaFields): Promise<MetaRow> {
  const [row] = await db.insert(metas).values(fields).returning();
  return row!;
}

/** The row as saved, or undefined when no meta has this id. */
export async function updateMeta(db: Database, id: number, fields: MetaFields): Promise<MetaRow | undefined> {
  const [row] = await db.update(metas).set(fields).where(eq(metas.id, id)).returning();
  return row;
}

export async function deleteMeta(db: Database, id: number): Promise<boolean> {
  const deleted = await db.delete(metas).where(eq(metas.id, id)).returning({ id: metas.id });
  return deleted.length > 0;
}
