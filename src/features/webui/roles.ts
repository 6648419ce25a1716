// The served web UI's roles. OpenList 4 (the front end Gatehouse serves) reads a user's `role` as
// one number, 0 general, 1 guest, 2 admin (OpenList internal/model/user.go:17-21), where AList v3.58
// clients, and so the API, read an array of role ids (docs/decisions.md D3.10). The page Gatehouse
// renders marks its own API requests with a header (page.ts); for those requests only, the replies
// that carry roles give them as OpenList's number, and the user form's role number means "unchanged".
// Every other client keeps the AList wire. The mark changes the shape of a field, never what a
// caller may do: a client that sends it gains nothing. docs/decisions.md D17.
import type { Context, MiddlewareHandler } from "hono";
import { openListRole } from "../../auth/roles.ts";
import type { AppEnv } from "../../http/context.ts";

/** The header the served page adds to its requests under /api/ (page.ts `markRequests`). */
export const WEB_UI_HEADER = "X-Gatehouse-UI";
export const WEB_UI_MARK = "openlist";

/** The replies that carry roles: the caller, users, and tasks (`creator_role`). */
const ROLE_REPLIES = /^\/api\/(?:me$|admin\/user\/|(?:admin\/)?task\/)/;
/** The user form, which posts back the number it read (or 0 for a new user) and has no role field. */
const USER_FORMS = new Set(["/api/admin/user/create", "/api/admin/user/update"]);
const ROLE_KEYS = new Set(["role", "creator_role"]);

export const webUiRoles: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.header(WEB_UI_HEADER) !== WEB_UI_MARK || !ROLE_REPLIES.test(c.req.path)) return next();
  if (c.req.method === "POST" && USER_FORMS.has(c.req.path)) await dropRoleNumber(c);
  await next();
  await numberRoles(c);
};

/**
 * OpenList's user form has no role field: the number it posts is what it read (an edit) or 0 (a new
 * user). Without it the user keeps its roles, and a new one gets the default role, as the API does
 * for a body without `role`.
 */
async function dropRoleNumber(c: Context<AppEnv>): Promise<void> {
  if (!c.req.header("Content-Type")?.includes("json")) return;
  const body: unknown = await c.req.raw
    .clone()
    .json()
    .catch(() => null);
  if (!isRecord(body) || typeof body.role !== "number") return;
  const { role: _number, ...rest } = body;
  // Nothing has read the body yet (the route's validator does, after this), so a new request is all it sees.
  c.req.raw = new Request(c.req.raw, { body: JSON.stringify(rest) });
}

/** The reply with each `role` and `creator_role` array of role ids as OpenList's number. */
async function numberRoles(c: Context<AppEnv>): Promise<void> {
  if (!c.res.headers.get("Content-Type")?.includes("application/json")) return;
  const reply: unknown = await c.res
    .clone()
    .json()
    .catch(() => null);
  if (!isRecord(reply)) return;
  let changed = false;
  const numbered = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(numbered);
    if (!isRecord(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (ROLE_KEYS.has(key) && isRoleIds(inner)) {
        out[key] = openListRole(inner);
        changed = true;
      } else out[key] = numbered(inner);
    }
    return out;
  };
  const data = numbered(reply.data);
  if (!changed) return;
  const { status, headers, body } = c.res;
  await body?.cancel();
  // Hono carries the old reply's headers over (CORS, request id, security headers set later too).
  c.res = new Response(JSON.stringify({ ...reply, data }), { status, headers });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isRoleIds = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((id) => typeof id === "number");
