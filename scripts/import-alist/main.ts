// npm run import:alist -- <AList data.db> [--dry-run] [--replace] [--prefix x_]
// Imports an AList v3 database into Gatehouse's (TURSO_DATABASE_URL, else the local default;
// docs/migrating-from-alist.md). Reads the AList file read-only, plans every write (plan.ts),
// prints the report, and unless --dry-run writes one all-or-nothing batch per table group.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Sqlite from "libsql";
import { databaseTargetFromEnv, describeTarget, migrateAndSeed, openNodeDatabase, projectRoot } from "../db.ts";
import { applyPlan, readTarget } from "./apply.ts";
import { planImport } from "./plan.ts";
import { OTP_KEY_MISSING } from "./types.ts";
import { countRefused, countWrites, formatReport } from "./report.ts";
import { NotAListError, readSource, type AListSource, type SourceRow } from "./source.ts";

const USAGE = "usage: npm run import:alist -- <path to AList data.db> [--dry-run] [--replace] [--prefix x_]";
const MIN_SECRET_LENGTH = 32;

export interface ImportArgs {
  file: string;
  dryRun: boolean;
  replace: boolean;
  prefix: string;
}

export function parseArgs(argv: string[]): ImportArgs | string {
  const args: ImportArgs = { file: "", dryRun: false, replace: false, prefix: "x_" };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--dry-run") args.dryRun = true;
    else if (arg === "--replace") args.replace = true;
    else if (arg === "--prefix") {
      const value = argv[++i];
      if (value === undefined || !/^[A-Za-z0-9_]*$/.test(value))
        return "--prefix takes a table prefix of letters, digits and _ (AList's default: x_)";
      args.prefix = value;
    } else if (arg.startsWith("--prefix=")) {
      const value = arg.slice("--prefix=".length);
      if (!/^[A-Za-z0-9_]*$/.test(value))
        return "--prefix takes a table prefix of letters, digits and _ (AList's default: x_)";
      args.prefix = value;
    } else if (arg.startsWith("-")) return `unknown option ${arg}`;
    else if (args.file) return "one AList database at a time";
    else args.file = arg;
  }
  return args.file ? args : "no AList database given";
}

/** Opens the file read-only and reads AList's tables; a clear error for a file that is not one. */
export function readAListFile(file: string, prefix: string): AListSource {
  if (!existsSync(file) || !statSync(file).isFile()) throw new NotAListError(`${file}: no such file`);
  let db: Sqlite.Database;
  try {
    db = new Sqlite(file, { readonly: true });
  } catch (error) {
    throw new NotAListError(`${file} cannot be opened as SQLite: ${(error as Error).message}`);
  }
  try {
    let tables: string[];
    try {
      tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
      ).map((r) => r.name);
    } catch (error) {
      throw new NotAListError(`${file} is not an SQLite database (${(error as Error).message})`);
    }
    const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
    return readSource(
      prefix,
      tables,
      (table) => (db.prepare(`PRAGMA table_info(${quote(table)})`).all() as { name: string }[]).map((c) => c.name),
      (table) =>
        db
          .prepare(`SELECT * FROM ${quote(table)}${table.endsWith("setting_items") ? "" : " ORDER BY id"}`)
          .all() as SourceRow[],
    );
  } finally {
    db.close();
  }
}

/** The Worker's 2FA sealing keys, from the environment or .dev.vars (what `npm start` gives the Worker). */
export function otpKeysFromEnv(
  env: NodeJS.ProcessEnv,
  devVarsPath = join(projectRoot, ".dev.vars"),
): Uint8Array[] | null {
  const devVars = existsSync(devVarsPath) ? parseDevVars(readFileSync(devVarsPath, "utf8")) : {};
  const keys: Uint8Array[] = [];
  for (const name of ["OTP_ENCRYPTION_KEY", "JWT_SECRET"]) {
    const value = env[name] || devVars[name];
    if (!value) continue;
    if (value.length < MIN_SECRET_LENGTH) throw new Error(`${name} must be at least ${MIN_SECRET_LENGTH} characters`);
    keys.push(new TextEncoder().encode(value));
  }
  return keys.length > 0 ? keys : null;
}

function parseDevVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    vars[match[1]!] = match[2]!.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
  }
  return vars;
}

export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  devVarsPath?: string,
): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === "string") {
    console.error(`${args}\n${USAGE}`);
    return 2;
  }
  let source: AListSource;
  try {
    source = readAListFile(args.file, args.prefix);
  } catch (error) {
    if (error instanceof NotAListError) {
      console.error(`Import refused: ${error.message}. Nothing was written.`);
      return 1;
    }
    throw error;
  }
  const otpKeys = otpKeysFromEnv(env, devVarsPath);
  const twoFactorUsers = source.tables.users.filter(
    (u) => typeof u.otp_secret === "string" && u.otp_secret.trim() !== "",
  );
  if (!otpKeys && twoFactorUsers.length > 0 && !args.dryRun) {
    console.error(
      `Import refused: ${twoFactorUsers.length} AList user(s) have two-factor sign-in on, and ${OTP_KEY_MISSING.replace("its 2FA secret needs", "their secrets need")}` +
        " (the value the Worker has: wrangler secret put OTP_ENCRYPTION_KEY, or .dev.vars for npm start). Nothing was written.",
    );
    return 1;
  }

  const target = databaseTargetFromEnv(env);
  // A real run brings the target's schema and first-run rows up to date first (idempotent, as db:migrate).
  const seeded = args.dryRun ? null : await migrateAndSeed(target, { adminPassword: env.ADMIN_PASSWORD });
  const { db, close } = openNodeDatabase(target);
  try {
    let state: Awaited<ReturnType<typeof readTarget>>;
    try {
      state = await readTarget(db);
    } catch (error) {
      console.error(
        `Cannot read ${describeTarget(target)}: ${(error as Error).message}${args.dryRun ? " (a dry run does not migrate: run npm run db:migrate first)" : ""}`,
      );
      return 1;
    }
    const plan = await planImport(source, state, { replace: args.replace, otpKeys, nowMs: Date.now() });
    console.log(
      `${args.dryRun ? "Dry run: nothing is written. " : ""}AList ${args.file} -> Gatehouse ${describeTarget(target)}`,
    );
    console.log(formatReport(plan, args.dryRun));
    const refused = countRefused(plan);
    if (!args.dryRun) {
      const { written } = await applyPlan(db, plan);
      const total = Object.values(written).reduce((a, b) => a + b, 0);
      console.log(
        total === 0
          ? "Nothing new to write."
          : `Wrote ${total} row change(s): ${Object.entries(written)
              .map(([g, n]) => `${g} ${n}`)
              .join(", ")}.`,
      );
      const adminTaken = plan.report.users.replaced.some((r) => r.includes("Gatehouse's admin"));
      if (seeded?.adminPassword && !adminTaken)
        console.log(`The admin account was created by this run; its password: ${seeded.adminPassword}`);
    } else {
      console.log(`${countWrites(plan)} row change(s) would be written.`);
    }
    if (refused > 0)
      console.log(`${refused} row(s) refused: fix them in AList (or by hand here) and run the import again.`);
    return 0;
  } catch (error) {
    console.error(`Import failed: ${(error as Error).message}`);
    return 1;
  } finally {
    close();
  }
}

if (process.argv[1] && /import-alist[\\/]main\.ts$/.test(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}
