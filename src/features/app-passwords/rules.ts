// What a user may do to their app passwords (docs/decisions.md D8.9): make one (random, shown once,
// stored as a hash, under a limit) and revoke one of their own. Each decision takes plain inputs (the
// caller's id, the parsed body) and returns data or throws the refusal (ApiError) the wire answers.
import { APP_PASSWORD_PREFIX } from "../../auth/access-keys.ts";
import { sha256Hex } from "../../auth/encoding.ts";
import { randomAlphanumeric } from "../../auth/random.ts";
import type { Database } from "../../db/client.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { MAX_ACCESS_KEYS } from "../access-keys/rules.ts";
import { APP_PASSWORD_NAME_TAKEN, APP_PASSWORD_NOT_FOUND, tooManyAppPasswords } from "./messages.ts";
import { addAppPassword, deleteAppPassword } from "./store.ts";

/** App passwords are access keys for WebDAV: one table, one limit per user. */
export const MAX_APP_PASSWORDS = MAX_ACCESS_KEYS;
/** The prefix tells a leaked app password apart in logs and secret scanners; 32 characters carry 190 bits. */
const newAppPassword = () => APP_PASSWORD_PREFIX + randomAlphanumeric(32);

/** A new app password of the user's: its id, the password (shown this once) and when it was made (unix seconds). */
export async function makeAppPassword(
  db: Database,
  userId: number,
  name: string,
): Promise<{ id: number; password: string; createdAt: number }> {
  const password = newAppPassword();
  const createdAt = Math.floor(Date.now() / 1000);
  const hash = await sha256Hex(password);
  const id = await refuseDuplicate(
    APP_PASSWORD_NAME_TAKEN,
    addAppPassword(db, { userId, name, hash, now: createdAt }, MAX_APP_PASSWORDS),
  );
  if (id === null) throw new ApiError(400, tooManyAppPasswords(MAX_APP_PASSWORDS));
  return { id, password, createdAt };
}

/** Revokes one of the user's app passwords; someone else's and a missing one are the same 404. */
export async function revokeAppPassword(db: Database, id: number, userId: number): Promise<void> {
  if (!(await deleteAppPassword(db, id, userId))) throw new ApiError(404, APP_PASSWORD_NOT_FOUND);
}
