/** True when a database error (or its cause, as Drizzle wraps them) is a UNIQUE constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (/UNIQUE constraint failed/i.test(e.message) || (e as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE")
      return true;
  }
  return false;
}

/** SQLite's codes for a database held by another writer: the same statement later may pass. */
const BUSY = /^SQLITE_(BUSY|LOCKED)/;

/**
 * True when a database error (or its cause) is one that may pass when tried again: the database unreachable
 * or overloaded (src/db/hrana.ts DatabaseUnavailable), or busy with another writer.
 */
export function isTransientDatabaseFailure(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e.name === "DatabaseUnavailable" || /database is locked/i.test(e.message)) return true;
    if ("code" in e && typeof e.code === "string" && BUSY.test(e.code)) return true;
  }
  return false;
}
