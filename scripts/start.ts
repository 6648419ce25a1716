// npm start: run Gatehouse locally.
//   0. PORT (8787) and LIBSQL_PORT are checked first: a taken one stops it before anything is written.
//   1. .dev.vars gets a random JWT_SECRET and OTP_ENCRYPTION_KEY if it lacks them (kept across runs,
//      so logins and two-factor enrolments survive restarts).
//   2. Database: TURSO_DATABASE_URL when set; otherwise the local libSQL endpoint on
//      <DATA_DIR>/gatehouse.db (DATA_DIR defaults to .data/), with a fresh random bearer token
//      that the Worker gets as TURSO_AUTH_TOKEN. The folder is 0700 and the files in it 0600.
//   3. Migrations and the idempotent seed; the admin's first password is printed once. A fresh
//      install also gets its first storage: wrangler.toml's R2 bucket (binding BUCKET) at "/".
//   4. The web UI in webui/ (normally unpacked by `npm ci` already; see scripts/webui.ts).
//   5. wrangler dev on 127.0.0.1:<PORT> (8787), with /__scheduled for triggering the cron by hand;
//      its local state, the R2 bucket's objects included, persists in <DATA_DIR>/wrangler.
// Ctrl-C stops wrangler and the endpoint.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  databaseTargetFromEnv,
  describeTarget,
  localDatabaseFile,
  migrateAndSeed,
  projectRoot,
  type DatabaseTarget,
} from "./db.ts";
import { startLibsqlServer, type LibsqlServer } from "./libsql-server/server.ts";
import { printSeedReport } from "./seed-report.ts";
import { ensureWebUi } from "./webui.ts";
import { portIsFree, startWranglerDev } from "./wrangler-dev.ts";

const port = Number(process.env.PORT || 8787);
// Before anything is written: a taken port would otherwise be found by wrangler, last, after the
// database was migrated and a new admin password printed.
for (const [name, value] of [
  ["PORT", port],
  ["LIBSQL_PORT", Number(process.env.LIBSQL_PORT || 0)],
] as const) {
  if (!Number.isInteger(value) || value < 0 || value > 65535 || (name === "PORT" && value === 0)) {
    console.error(`${name} must be a TCP port number, got "${process.env[name]}"`);
    process.exit(1);
  }
  if (value !== 0 && !(await portIsFree(value))) {
    console.error(
      `Port ${value} on 127.0.0.1 is in use. Stop what holds it, or pick another: ${name}=${value + 1} npm start`,
    );
    process.exit(1);
  }
}
const dataDir = resolve(process.env.DATA_DIR || join(projectRoot, ".data"));
// Private: it holds the database, its bearer token (wrangler.vars) and wrangler's state. A chosen
// DATA_DIR is created 0700 but left as it is if it exists; the default one is narrowed to 0700.
mkdirSync(dataDir, { recursive: true, mode: 0o700 });
if (!process.env.DATA_DIR) chmodSync(dataDir, 0o700);

ensureDevSecrets(join(projectRoot, ".dev.vars"), ["JWT_SECRET", "OTP_ENCRYPTION_KEY"]);
try {
  if (ensureWebUi() === "installed") console.log("Web UI unpacked into webui/");
} catch (error) {
  console.error(`Web UI: ${(error as Error).message}`);
  process.exit(1);
}

let endpoint: LibsqlServer | undefined;
let target: DatabaseTarget;
if (process.env.TURSO_DATABASE_URL) {
  target = databaseTargetFromEnv();
} else {
  const file = localDatabaseFile({ DATA_DIR: dataDir });
  endpoint = await startLibsqlServer({ path: file, port: Number(process.env.LIBSQL_PORT || 0) });
  target = { url: endpoint.url, authToken: endpoint.authToken };
  console.log(`libSQL endpoint ${endpoint.url} on ${file}`);
}

try {
  const report = await migrateAndSeed(target, { adminPassword: process.env.ADMIN_PASSWORD, defaultStorage: true });
  printSeedReport(report);
  if (report.storagesAdded > 0)
    console.log(
      'Mounted the R2 bucket of wrangler.toml (binding BUCKET) at "/": upload files in the web UI right away',
    );
} catch (error) {
  console.error(`Could not migrate ${describeTarget(target)}: ${(error as Error).message}`);
  await endpoint?.close();
  process.exit(1);
}

const wrangler = startWranglerDev({
  port,
  dataDir,
  database: target,
  envFiles: [join(projectRoot, ".dev.vars")],
  stdio: "inherit",
  // A smaller part size to watch copies go in parts locally (the restart test uses S3's 5 MiB), and
  // the opt-in to offline downloads from private hosts (docs/configuration.md): both off by default.
  vars: Object.fromEntries(
    (["TASK_PART_BYTES", "OFFLINE_DOWNLOAD_PRIVATE_HOSTS"] as const).flatMap((name) =>
      process.env[name] ? [[name, process.env[name]]] : [],
    ),
  ),
});

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    wrangler.kill(signal);
  });
}
wrangler.on("exit", async (code, signal) => {
  await endpoint?.close();
  process.exit(code ?? (signal ? 0 : 1));
});

function ensureDevSecrets(path: string, names: string[]): void {
  let current = existsSync(path) ? readFileSync(path, "utf8") : "";
  const missing = names.filter((name) => !new RegExp(`^${name}=.+$`, "m").test(current));
  if (missing.length === 0) return;
  if (current && !current.endsWith("\n")) current += "\n";
  for (const name of missing) current += `${name}=${randomBytes(48).toString("base64url")}\n`;
  writeFileSync(path, current, { mode: 0o600 });
  chmodSync(path, 0o600);
  console.log(`Wrote a random ${missing.join(" and ")} to ${path}`);
}
