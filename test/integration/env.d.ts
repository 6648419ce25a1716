import type { Env as GatehouseEnv } from "../../src/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends GatehouseEnv {}
  }
}
