import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";

// The layers, run one after another by `npm test`. A feature's or module's own tests sit beside it:
// src/<dir>/<name>.test.ts runs in unit, src/<dir>/<name>.workerd.test.ts in workerd (the AList
// importer's likewise in scripts/import-alist/test); test/ holds the suites that span the API.
//   unit     - the Hono app through app.request() in Node, on a libSQL file per test file
//   libsql   - the local libSQL endpoint (development tooling), driven by @libsql/client; its tests
//              live beside it in scripts/libsql-server/test
//   workerd  - the Worker inside workerd, talking to the local endpoint over Hrana/HTTP
//   browser  - `npm start` driven by Debian's Chromium (playwright-core): the web UI end to end
//   clients  - `npm start` driven from outside: real WebDAV clients from Debian (rclone, litmus), and
//              a restart in the middle of background copies
export default defineConfig({
  test: {
    // The access log prints a line per request; show it only for tests that fail.
    silent: "passed-only",
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "scripts/import-alist/test/**/*.test.ts", "test/unit/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "**/*.workerd.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          name: "libsql",
          include: ["scripts/libsql-server/test/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                TURSO_DATABASE_URL: inject("libsqlUrl"),
                TURSO_AUTH_TOKEN: inject("libsqlAuthToken"),
                JWT_SECRET: "workerd-test-secret-workerd-test-secret-0123",
                // S3's smallest part: a file of a few MiB is copied in parts (tasks.workerd.test.ts).
                TASK_PART_BYTES: String(5 * 1024 * 1024),
                // A heartbeat every 200 ms: the tests that wait for one wait that long, not 2 s.
                TASK_HEARTBEAT_MS: "200",
                // The download servers of test/support listen here; every other private host stays
                // refused, which tasks.workerd.test.ts shows with `localhost` and the like.
                OFFLINE_DOWNLOAD_PRIVATE_HOSTS: "127.0.0.1",
              },
            },
          })),
        ],
        test: {
          name: "workerd",
          include: [
            "src/**/*.workerd.test.ts",
            "scripts/import-alist/test/**/*.workerd.test.ts",
            "test/integration/**/*.test.ts",
          ],
          globalSetup: [
            "test/support/libsql-global-setup.ts",
            "test/support/storage-servers-global-setup.ts",
            "test/support/zip-fixtures-global-setup.ts",
            "test/support/ldap-global-setup.ts",
            "test/support/oidc-global-setup.ts",
          ],
          // Files share one endpoint; one at a time keeps round-trip counts exact.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          // wrangler dev's first start compiles the Worker; the UI's pages load real bundles.
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "clients",
          include: ["test/clients/**/*.test.ts"],
          environment: "node",
          testTimeout: 300_000,
          hookTimeout: 150_000,
        },
      },
    ],
  },
});
