import type { SeedReport } from "../src/db/seed.ts";

export function printSeedReport(report: SeedReport): void {
  const changes = [
    [report.rolesAdded, "roles added"],
    [report.usersAdded, "users added"],
    [report.settingsAdded, "settings added"],
    [report.settingsRepaired, "settings repaired"],
    [report.settingsDeprecated, "settings marked deprecated"],
    [report.storagesAdded, "storages added"],
  ].filter(([count]) => count !== 0);
  console.log(
    changes.length ? `Seed: ${changes.map(([n, what]) => `${n} ${what}`).join(", ")}` : "Seed: nothing to change",
  );
  if (report.adminPassword !== null) {
    console.log(`Successfully created the admin user and the initial password is: ${report.adminPassword}`);
  }
}
