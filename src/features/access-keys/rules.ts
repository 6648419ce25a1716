// What a user may do with its access keys (docs/decisions.md D16): make one (a folder inside its
// reach, rights it holds there, an expiry, the ways it may be used; the secret shown once and
// stored as a hash, the S3 secret sealed) and revoke one; an admin revokes anyone's. Each decision
// takes plain inputs and returns data or throws the refusal (ApiError) the wire answers.
import { ACCESS_KEY_PREFIX } from "../../auth/access-keys.ts";
import { sha256Hex } from "../../auth/encoding.ts";
import { randomAlphanumeric } from "../../auth/random.ts";
import type { Caller } from "../../auth/caller.ts";
import type { Database } from "../../db/client.ts";
import type { AccessKeyUsage } from "../../db/schema.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { isWithin, joinBasePath } from "../fs/path.ts";
import { canReadPath, grantsOf, Permission, withinPathLimit } from "../fs/rules.ts";
import { seal } from "../two-factor/secret-box.ts";
import {
  ACCESS_KEY_NAME_TAKEN,
  ACCESS_KEY_NOT_FOUND,
  KEY_EXPIRY_PAST,
  KEY_PATH_OUT_OF_REACH,
  KEY_RIGHTS_BEYOND_USER,
  tooManyAccessKeys,
} from "./messages.ts";
import { addAccessKey, deleteAccessKey } from "./store.ts";

/**
 * Keys and app passwords are one table and share one limit per user (app-passwords/rules.ts reads
 * it from here): enough for every device a person owns; stops one account from filling the table.
 */
export const MAX_ACCESS_KEYS = 50;

/** The bits a key may carry: every file-side bit of a role scope (the path limit is the user's own). */
const KEY_BITS = Object.values(Permission).reduce((all, bit) => all | bit, 0) & ~Permission.PATH_LIMIT;

/** A key made without `permission`: the reading rights its user holds in its folder. */
const READ_ONLY_BITS =
  Permission.SEE_HIDES | Permission.ACCESS_WITHOUT_PASSWORD | Permission.WEBDAV_READ | Permission.READ_ARCHIVES;

export interface NewKey {
  name: string;
  /** A folder as the user sees it (its base path is joined). */
  path: string;
  permission: number | undefined;
  expiresAt: number;
  usage: AccessKeyUsage[];
}

export interface MadeKey {
  id: number;
  /** The full path of the key's folder. */
  path: string;
  permission: number;
  usage: AccessKeyUsage[];
  createdAt: number;
  secret: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
}

/**
 * The full path of a key's folder, and the rights its user holds there: the bits of every role scope
 * at, above or below it (a key on `/` may write where the user may, below it).
 */
function keyReach(caller: Caller, requested: string): { path: string; held: number } {
  const path = joinBasePath(caller.user.basePath, requested);
  const grants = grantsOf(caller.roles, caller.user.permission);
  if (path === null || !canReadPath(grants, path) || !withinPathLimit(grants, path))
    throw new ApiError(403, KEY_PATH_OUT_OF_REACH);
  let held = 0;
  for (const scope of grants.scopes)
    if (isWithin(path, scope.path) || isWithin(scope.path, path)) held |= scope.permission;
  return { path, held: held & KEY_BITS };
}

/** The key's rights: those asked for, all held by the user; the reading ones it holds when none were asked. */
function keyRights(asked: number | undefined, held: number): number {
  if (asked === undefined) return held & READ_ONLY_BITS;
  if ((asked & ~held) !== 0) throw new ApiError(400, KEY_RIGHTS_BEYOND_USER);
  return asked;
}

/** S3 credentials: an AWS-shaped id (20 characters, upper case) and a 40-character secret. */
const newAccessKeyId = () => `GK${randomAlphanumeric(18).toUpperCase()}`;

/** A new access key of the caller's (a session of its own account: the guard refuses keys here). */
export async function makeAccessKey(
  db: Database,
  sealingKeys: Uint8Array[],
  caller: Caller,
  input: NewKey,
  now: number,
): Promise<MadeKey> {
  const { path, held } = keyReach(caller, input.path);
  const permission = keyRights(input.permission, held);
  if (input.expiresAt !== 0 && input.expiresAt <= now) throw new ApiError(400, KEY_EXPIRY_PAST);
  const usage = [...new Set(input.usage)];
  const secret = ACCESS_KEY_PREFIX + randomAlphanumeric(32);
  const s3 = usage.includes("s3");
  const accessKeyId = s3 ? newAccessKeyId() : null;
  const secretAccessKey = s3 ? randomAlphanumeric(40) : null;
  const id = await refuseDuplicate(
    ACCESS_KEY_NAME_TAKEN,
    addAccessKey(
      db,
      {
        userId: caller.user.id,
        name: input.name,
        hash: await sha256Hex(secret),
        now,
        path,
        permission,
        expiresAt: input.expiresAt,
        usage,
        accessKeyId,
        s3Secret: secretAccessKey === null ? null : await seal(sealingKeys, secretAccessKey, "s3-secret-v1"),
      },
      MAX_ACCESS_KEYS,
    ),
  );
  if (id === null) throw new ApiError(400, tooManyAccessKeys(MAX_ACCESS_KEYS));
  return { id, path, permission, usage, createdAt: now, secret, accessKeyId, secretAccessKey };
}

/** The folder of a key as its user sees it now: below the base path, or the full path when outside it. */
export function seenPath(basePath: string, path: string): string {
  if (basePath === "/" || !isWithin(path, basePath)) return path;
  return path.slice(basePath.length) || "/";
}

/** Revokes a key: the user's own (`userId`), or anyone's (null, the admin); a missing one is 404. */
export async function revokeAccessKey(db: Database, id: number, userId: number | null): Promise<void> {
  if (!(await deleteAccessKey(db, id, userId))) throw new ApiError(404, ACCESS_KEY_NOT_FOUND);
}
