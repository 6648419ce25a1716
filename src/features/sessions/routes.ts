// Device sessions: the caller's own (/api/me/sessions) and everyone's for admins (AList v3.58.0
// server/handles/session.go).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly, planned, reading, signedIn } from "../../auth/guard.ts";
import { ok } from "../../http/envelope.ts";
import { fromQuery, pageWindow, pagingParams } from "../../http/params.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { evictAnySession, evictOwnSession, ownSessions } from "./rules.ts";
import { activeSessions } from "./store.ts";

// The reply stays a bare array, as AList's and as its web UI reads it; `page`/`per_page` only
// bound it (per_page 0 or absent: the first MAX_PAGE_SIZE rows).
const SessionPage = { query: z.object(pagingParams) };
const ownPlan = fromQuery(SessionPage.query, (db, query, callerId) => activeSessions(db, callerId, pageWindow(query)));
const allPlan = fromQuery(SessionPage.query, (db, query) => activeSessions(db, null, pageWindow(query)));
const EvictBody = {
  body: jsonBody(z.object({ session_id: z.string().check(z.minLength(1), z.maxLength(64)) })),
};

const listOwn = createRoute({
  method: "get",
  path: "/api/me/sessions",
  ...reading(signedIn, ownPlan),
  request: SessionPage,
});

const evictOwn = createRoute({
  method: "post",
  path: "/api/me/sessions/evict",
  ...signedIn,
  request: EvictBody,
});

const listAll = createRoute({
  method: "get",
  path: "/api/admin/session/list",
  ...reading(adminOnly, allPlan),
  request: SessionPage,
});

const evictAny = createRoute({
  method: "post",
  path: "/api/admin/session/evict",
  ...adminOnly,
  request: EvictBody,
});

type Row = ReturnType<ReturnType<typeof activeSessions>["read"]>[number];
const ownView = (s: Row) => ({
  session_id: s.sessionId,
  last_active: s.lastActive,
  status: s.status,
  ua: s.userAgent,
  ip: s.ip,
});

export function registerSessionRoutes(app: Router) {
  // The guest and the permanent token have no device sessions (docs/decisions.md D4.6).
  app.openapi(listOwn, async (c) => ok(c, ownSessions(c.var.caller.via, await planned(c, ownPlan)).map(ownView)));

  app.openapi(evictOwn, async (c) => {
    const { via, user } = c.var.caller;
    await evictOwnSession(c.var.db, { via, userId: user.id }, c.req.valid("json").session_id);
    return ok(c, null);
  });

  app.openapi(listAll, async (c) =>
    ok(
      c,
      (await planned(c, allPlan)).map((s) => ({ ...ownView(s), user_id: s.userId })),
    ),
  );

  app.openapi(evictAny, async (c) => {
    await evictAnySession(c.var.db, c.req.valid("json").session_id);
    return ok(c, null);
  });
}
