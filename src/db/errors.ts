/** True when a database error (or its cause, as Drizzle wraps them) is a UNIQUE constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (/UNIQUE constraint failed/i.test(e.message) || (e as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE")
      return true;
  }
  return false;
}
