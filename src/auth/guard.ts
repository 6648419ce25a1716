// The one auth guard. It resolves the caller from the Authorization header:
//   empty                 → the guest account (401 while it is disabled, AList's default)
//   a JWT                 → its device session's user, if the token is still good (one round trip)
//   the permanent token   → the admin (compared in constant time)
//   an access key         → its user, cut to the key's folder and rights, on the file side only
//                           (docs/decisions.md D16; auth/access-keys.ts)
// Guests and permanent-token callers have no device session (docs/decisions.md D4.6).
import type { Context, MiddlewareHandler } from "hono";
import { jwtSecret } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { ADMIN_ROLE_ID, GUEST_ROLE_ID } from "./roles.ts";
import { DeviceSessionStatus } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { clientIp, maskIp, userAgent } from "./client.ts";
import { constantTimeEqual } from "./password.ts";
import {
  NOT_ADMIN,
  readGuest,
  readKeyCaller,
  reserveAttempt,
  readPermanentTokenAdmin,
  readTokenSession,
  type CallerReads,
} from "./store.ts";
import { isAccessKeySecret, KEY_TOUCH_SECONDS, keyCaller, keyReaches, keyRefusal, keyTouchDue } from "./access-keys.ts";
import { sha256Hex } from "./encoding.ts";
import { isLockedOut } from "./lockout.ts";
import { tokenFromHeader, verifyToken } from "./tokens.ts";
import type { Caller } from "./caller.ts";
import { sql, type SQL } from "drizzle-orm";
import { run, type Plan } from "../db/plan.ts";
import {
  ACCESS_KEY_FILES_ONLY,
  GUEST_DISABLED,
  LOCKED_OUT_MESSAGE,
  NOT_AN_ADMIN,
  PASSWORD_CHANGED,
  SESSION_INACTIVE,
  TOKEN_INVALIDATED,
  TOKEN_USER_NOT_FOUND,
  USER_DISABLED,
} from "./messages.ts";

export const isAdmin = (caller: Caller) => caller.user.roleIds.includes(ADMIN_ROLE_ID);
export const isGuest = (caller: Caller) => caller.user.roleIds.includes(GUEST_ROLE_ID);

/** Route middleware: puts the caller on the context or answers 401. */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("caller", await resolveCaller(c));
  await next();
};

/** Route middleware, after `authenticate`: admins only. */
export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.var.caller.key) throw new ApiError(403, ACCESS_KEY_FILES_ONLY);
  if (!isAdmin(c.var.caller)) throw new ApiError(403, NOT_AN_ADMIN);
  await next();
};

/** OpenAPI: a login token or the permanent token, either one (schemes registered in app.ts). */
const eitherToken = (): Record<string, string[]>[] => [{ token: [] }, { permanentToken: [] }];

/** Spread into `createRoute({...})`: the route needs a signed-in caller (the guest counts, when enabled). */
export const signedIn = {
  middleware: [authenticate] as [typeof authenticate],
  security: eitherToken(),
};

/** Spread into `createRoute({...})`: the route is for admins only. */
export const adminOnly = {
  middleware: [authenticate, requireAdmin] as [typeof authenticate, typeof requireAdmin],
  security: eitherToken(),
};

/**
 * Spread into `createRoute({...})`: a signed-in account, not the guest. The guest is refused with
 * AList's code and message for the route, before the request body is even read.
 */
export function accountOnly(code: 401 | 403, guestMessage: string) {
  const refuseGuest: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (isGuest(c.var.caller)) throw new ApiError(code, guestMessage);
    await next();
  };
  return {
    middleware: [authenticate, refuseGuest] as [typeof authenticate, typeof refuseGuest],
    security: eitherToken(),
  };
}

type Access = { middleware: readonly MiddlewareHandler<AppEnv>[]; security: Record<string, string[]>[] };

/**
 * Spread into `createRoute({...})` instead of `access`: the same guard, and the route's own reads
 * (a plan built from the raw request) travel in the guard's batch, so the route costs one round
 * trip in all. `build` returns null when the request is not valid (its validator answers 400
 * next); the handler takes the results with `planned(c, build)`. Refused callers' reads are
 * thrown away unread.
 */
export function reading<T>(access: Access, build: RoutePlan<T>) {
  const guard: MiddlewareHandler<AppEnv> = async (c, next) => {
    // A plan from a JSON body reads it here first (Hono keeps it for the route's validator).
    if (build.readsJson)
      c.set(
        "json",
        /json/i.test(c.req.header("Content-Type") ?? "") ? await c.req.json().catch(() => undefined) : undefined,
      );
    let route: Plan<T> | null = null;
    const { reads } = await authenticateWith(c, (callerId, callerIsAdmin) => {
      route = build(c, callerId, callerIsAdmin);
      return route?.reads ?? [];
    });
    if (route) c.set("routeData", { build, value: (route as Plan<T>).read(reads) });
    await next();
  };
  const [, ...rest] = access.middleware;
  return { middleware: [guard, ...rest] as [typeof guard, ...MiddlewareHandler<AppEnv>[]], security: access.security };
}

/**
 * A route's plan, from the raw request, the caller's user id (a scalar subquery) and whether the
 * caller is an admin (SQL, false unless the batch proves it: a plan's writes are conditioned on
 * it); null for a request its validator refuses.
 */
export type RoutePlan<T> = ((c: Context<AppEnv>, callerId: SQL, callerIsAdmin: SQL) => Plan<T> | null) & {
  readsJson?: boolean;
};

/**
 * In a handler of a `reading` route: what its plan read. Should the plan not have been built
 * before the guard (a request its schema accepts after all), or be another than the route's,
 * it runs now: one more round trip, never a wrong answer.
 */
export async function planned<T>(c: Context<AppEnv>, build: RoutePlan<T>): Promise<T> {
  const data = c.var.routeData as { build: RoutePlan<T>; value: T } | undefined;
  if (data?.build === build) return data.value;
  if (build.readsJson) c.set("json", await c.req.json());
  const route = build(c, sql`${c.var.caller.user.id}`, NOT_ADMIN);
  if (!route) throw new Error("a reading route's plan refused a request its validator accepted");
  return run(c.var.db, route);
}

/** How the guard tells a login token from the permanent token; a permanent token must not match. */
export const JWT_SHAPE = /^[\w-]+\.[\w-]*\.[\w-]*$/;

/**
 * The caller, with the results of `extra` read in the same round trip (a route's own reads: one
 * batch for the guard and the route). Throws the guard's refusals like `authenticate`.
 */
async function authenticateWith(c: Context<AppEnv>, extra: CallerReads): Promise<{ caller: Caller; reads: unknown[] }> {
  const { caller, reads } = await resolve(c, extra);
  c.set("caller", caller);
  return { caller, reads };
}

async function resolveCaller(c: Context<AppEnv>): Promise<Caller> {
  return (await resolve(c, [])).caller;
}

type Resolution = { caller: Caller; reads: unknown[] };

function resolve(c: Context<AppEnv>, extra: CallerReads): Promise<Resolution> {
  const token = tokenFromHeader(c.req.header("Authorization"));
  if (token === "") return guest(c, extra);
  if (JWT_SHAPE.test(token)) return sessionCaller(c, token, extra);
  if (isAccessKeySecret(token)) return accessKeyCaller(c, token, extra);
  return permanentTokenCaller(c, token, extra);
}

async function guest(c: Context<AppEnv>, extra: CallerReads): Promise<Resolution> {
  const { guest, roles, extra: reads } = await readGuest(c.var.db, extra);
  if (!guest || guest.disabled) throw new ApiError(401, GUEST_DISABLED);
  return { caller: { user: guest, roles, via: "guest", deviceKey: null }, reads };
}

async function sessionCaller(c: Context<AppEnv>, token: string, extra: CallerReads): Promise<Resolution> {
  const claims = await verifyToken(jwtSecret(c.env), token);
  const now = Math.floor(Date.now() / 1000);
  const {
    session,
    user,
    roles,
    extra: reads,
  } = await readTokenSession(c.var.db, claims, { now, userAgent: userAgent(c), ip: maskIp(clientIp(c)) }, extra);
  // AList's checks and messages, in its order: user, password change, disabled, session.
  if (!user || user.username !== claims.username) throw new ApiError(401, TOKEN_USER_NOT_FOUND);
  if (user.passwordChangedAt !== claims.pwd_ts) throw new ApiError(401, PASSWORD_CHANGED);
  if (user.disabled) throw new ApiError(401, USER_DISABLED);
  if (!session || session.status !== DeviceSessionStatus.ACTIVE || session.tokenId !== claims.jti) {
    throw new ApiError(401, SESSION_INACTIVE);
  }
  return { caller: { user, roles, via: "session", deviceKey: session.deviceKey }, reads };
}

async function permanentTokenCaller(c: Context<AppEnv>, presented: string, extra: CallerReads): Promise<Resolution> {
  const { token, admin, roles, extra: reads } = await readPermanentTokenAdmin(c.var.db, extra);
  const encoder = new TextEncoder();
  if (token === "" || !admin || !constantTimeEqual(encoder.encode(presented), encoder.encode(token))) {
    throw new ApiError(401, TOKEN_INVALIDATED);
  }
  return { caller: { user: admin, roles, via: "permanent_token", deviceKey: null }, reads };
}

async function accessKeyCaller(c: Context<AppEnv>, secret: string, extra: CallerReads): Promise<Resolution> {
  const now = Math.floor(Date.now() / 1000);
  const ip = clientIp(c);
  const hash = await sha256Hex(secret);
  const touch = keyTouchDue(hash, now) ? KEY_TOUCH_SECONDS : null;
  const { failures, key, user, roles, extra: reads } = await readKeyCaller(c.var.db, { hash, ip, now, touch }, extra);
  // Wrong keys count toward the sign-in lockout of the client's address (docs/decisions.md D16.6).
  if (isLockedOut(failures)) throw new ApiError(429, LOCKED_OUT_MESSAGE);
  const refusal = keyRefusal(key, user, "api", now);
  if (refusal) {
    if (refusal.counted) await reserveAttempt(c.var.db, "ip", ip, now);
    throw new ApiError(refusal.code, refusal.message);
  }
  if (!keyReaches(c.req.method, c.req.path)) throw new ApiError(403, ACCESS_KEY_FILES_ONLY);
  return { caller: keyCaller(user!, roles, key!, "access_key"), reads };
}
