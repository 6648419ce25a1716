// Single sign-on with OpenID Connect (docs/decisions.md D20): OpenList's routes, answered with
// redirects and a page for the browser's popup rather than the envelope (a refusal is still one).
import type { Context } from "hono";
import { clientId, clientIp, userAgent } from "../../auth/client.ts";
import type { AppEnv } from "../../http/context.ts";
import type { Router } from "../../http/router.ts";
import { callbackPage, fallbackUrl } from "./page.ts";
import { beginSignIn, CALLBACK_PATH, finishSignIn } from "./rules.ts";

/** OpenList's other names of the callback (its compatibility mode's redirect URIs); the same handler here. */
export const CALLBACK_ALIASES = ["/api/auth/sso_get_token", "/api/auth/get_sso_id"] as const;

async function callback(c: Context<AppEnv>): Promise<Response> {
  const result = await finishSignIn(
    c.env,
    c.var.db,
    {
      state: c.req.query("state"),
      code: c.req.query("code"),
      error: c.req.query("error"),
      errorDescription: c.req.query("error_description"),
    },
    { ip: clientIp(c), userAgent: userAgent(c), clientId: clientId(c) },
    c.req.url,
  );
  if (result.redirect) {
    return new Response(null, { status: 302, headers: { Location: fallbackUrl(result), "Cache-Control": "no-store" } });
  }
  return callbackPage(result);
}

export function registerSsoRoutes(app: Router) {
  app.get("/api/auth/sso", async (c) => {
    const location = await beginSignIn(c.var.db, c.req.query("method"), c.req.url);
    return new Response(null, { status: 302, headers: { Location: location, "Cache-Control": "no-store" } });
  });
  app.get(CALLBACK_PATH, callback);
  for (const path of CALLBACK_ALIASES) app.get(path, callback);

  app.openAPIRegistry.registerPath({ method: "get", path: "/api/auth/sso" });
  for (const path of [CALLBACK_PATH, ...CALLBACK_ALIASES]) app.openAPIRegistry.registerPath({ method: "get", path });
}
