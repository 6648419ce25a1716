import type { Env as GatehouseEnv } from "../../src/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends GatehouseEnv {}
    // Types `exports.default` (from cloudflare:workers) as the Worker under test.
    interface GlobalProps {
      mainModule: typeof import("../../src/index.ts");
    }
  }
}
