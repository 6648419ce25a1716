// npm run db:migrate: apply drizzle/ migrations and the idempotent seed to TURSO_DATABASE_URL
// (file:, http:, https:, libsql:), or to the local file under DATA_DIR when it is unset.
import { databaseTargetFromEnv, describeTarget, migrateAndSeed } from "./db.ts";
import { printSeedReport } from "./seed-report.ts";

const target = databaseTargetFromEnv();
try {
  const report = await migrateAndSeed(target, { adminPassword: process.env.ADMIN_PASSWORD });
  console.log(`Migrated ${describeTarget(target)}`);
  printSeedReport(report);
} catch (error) {
  console.error(`Migration of ${describeTarget(target)} failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
