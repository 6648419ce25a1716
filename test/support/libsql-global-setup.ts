// globalSetup of the workerd project: a local libSQL endpoint on 127.0.0.1 over a fresh file,
// migrated and seeded through the endpoint itself (as npm start does), its URL handed to the
// Worker's bindings through vitest's provide/inject, with the endpoint's bearer token.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { migrateAndSeed } from "../../scripts/db.ts";
import { startLibsqlServer } from "../../scripts/libsql-server/server.ts";

import { INTEGRATION_ADMIN_PASSWORD } from "./integration-constants.ts";

declare module "vitest" {
  export interface ProvidedContext {
    libsqlUrl: string;
    libsqlAuthToken: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-workerd-"));
  const server = await startLibsqlServer({ path: join(dir, "gatehouse.db"), port: 0 });
  await migrateAndSeed({ url: server.url, authToken: server.authToken }, { adminPassword: INTEGRATION_ADMIN_PASSWORD });
  project.provide("libsqlUrl", server.url);
  project.provide("libsqlAuthToken", server.authToken);
  return async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  };
}
