// What a user may do to their SSH public keys and an admin to anyone's (AList v3.58.0
// server/handles/sshkey.go, with docs/decisions.md D4.7). Each decision takes plain inputs (the
// caller's id, the parsed body, what the route's plan read) and returns data or throws the refusal
// (ApiError) the wire answers; the key format is parse.ts's.
import type { Database } from "../../db/client.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { KEY_NOT_FOUND, KEY_TITLE_TAKEN, keyInvalid, tooManyKeys, USER_INVALID } from "./messages.ts";
import { InvalidKeyError, parsePublicKey } from "./parse.ts";
import { addKey, deleteKey } from "./store.ts";

/** Enough for any real person; stops one account from filling the table. */
export const MAX_KEYS_PER_USER = 100;

/** Adds an OpenSSH public key to the user's: a key that parses, a title of their own, under the limit. */
export async function addOwnKey(db: Database, userId: number, entry: { title: string; key: string }): Promise<void> {
  let parsed: Awaited<ReturnType<typeof parsePublicKey>>;
  try {
    parsed = await parsePublicKey(entry.key);
  } catch (error) {
    if (error instanceof InvalidKeyError) throw new ApiError(400, keyInvalid(error.message));
    throw error;
  }
  const added = await refuseDuplicate(
    KEY_TITLE_TAKEN,
    addKey(
      db,
      {
        userId,
        title: entry.title,
        fingerprint: parsed.fingerprint,
        keyText: entry.key.trim(),
        now: Math.floor(Date.now() / 1000),
      },
      MAX_KEYS_PER_USER,
    ),
  );
  if (!added) throw new ApiError(400, tooManyKeys(MAX_KEYS_PER_USER));
}

/** Deletes key `id` if it is `userId`'s (anyone's when null); someone else's and a missing one are the same 404. */
export async function removeKey(db: Database, id: number, userId: number | null): Promise<void> {
  if (!(await deleteKey(db, id, userId))) throw new ApiError(404, KEY_NOT_FOUND);
}

/** A user's keys as an admin's read found them; a missing user is AList's 404. */
export function foundUserKeys<T extends { user: unknown }>(page: T): T {
  if (!page.user) throw new ApiError(404, USER_INVALID);
  return page;
}
