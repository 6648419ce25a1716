// What a caller may see and end of the device sessions (AList v3.58.0 server/handles/session.go,
// docs/decisions.md D4.6). Each decision takes plain inputs (how the caller signed in, the parsed
// body, what the route's plan read) and returns data or throws the refusal (ApiError) the wire answers.
import type { Caller } from "../../auth/caller.ts";
import type { Database } from "../../db/client.ts";
import { ApiError } from "../../http/errors.ts";
import { SESSION_NOT_FOUND } from "./messages.ts";
import { evictSession } from "./store.ts";

/** The caller's own sessions: the guest and the permanent token have none, whatever the plan read. */
export function ownSessions<T>(via: Caller["via"], rows: readonly T[]): readonly T[] {
  return via === "session" ? rows : [];
}

/** Ends one of the caller's sessions; someone else's and a missing one are the same 404. */
export async function evictOwnSession(
  db: Database,
  caller: { via: Caller["via"]; userId: number },
  sessionId: string,
): Promise<void> {
  if (caller.via !== "session" || !(await evictSession(db, sessionId, caller.userId)))
    throw new ApiError(404, SESSION_NOT_FOUND);
}

/** Ends anyone's session (admins). */
export async function evictAnySession(db: Database, sessionId: string): Promise<void> {
  if (!(await evictSession(db, sessionId, null))) throw new ApiError(404, SESSION_NOT_FOUND);
}
