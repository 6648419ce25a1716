// What a request carries through the app: the Worker's bindings and the values middleware puts on
// the Hono context. Kept apart from env.ts, which is configuration only and imports nothing of the app.
import type { Caller } from "../auth/caller.ts";
import type { Database } from "../db/client.ts";
import type { Env } from "../env.ts";

interface AppVariables {
  db: Database;
  requestId: string;
  /** Who is calling; set by the auth guard on the routes that use it. */
  caller: Caller;
  /** The request's JSON body, read before the guard for a plan that needs it (http/params.ts `fromJson`). */
  json: unknown;
  /** That body as the plan's schema parsed it, for the route's validator to take as it is (http/params.ts `fromJson`). */
  parsedJson: { schema: unknown; data: unknown };
  /** What a route's own reads returned, read in the guard's batch (auth/guard.ts `reading`; `planned` reads it back). */
  routeData: unknown;
  /** The envelope code of the reply, for the access log. */
  envelopeCode: number;
  /** Set for a reply whose code says failure but which answers the request as it should. */
  expectedFailure: boolean;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
