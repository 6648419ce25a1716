// npm run admin -- set-password <password> | random
// Recovers access to the admin account: the account holding the admin role (the first by id, as
// the permanent token's admin), whatever it is called now; any user can take the name "admin" once
// the admin renames itself. Changing the password also moves pwd_ts strictly forward, so every
// token issued before is rejected on its next request. Both rules are the Worker's own
// (firstAdminId, newPasswordColumns), used here rather than written again.
import { eq } from "drizzle-orm";
import { randomAlphanumeric } from "../src/auth/random.ts";
import { firstAdminId } from "../src/auth/store.ts";
import { users } from "../src/db/schema.ts";
import { storedPasswordHash } from "../src/features/users/rules.ts";
import { newPasswordColumns } from "../src/features/users/store.ts";
import { databaseTargetFromEnv, describeTarget, openNodeDatabase } from "./db.ts";

const usage = "usage: npm run admin -- set-password <password> | random";
const [command, argument] = process.argv.slice(2);

let password: string;
if (command === "set-password" && argument) password = argument;
else if (command === "random" && !argument) password = randomAlphanumeric(16);
else {
  console.error(usage);
  process.exit(2);
}

const target = databaseTargetFromEnv();
const { db, close } = openNodeDatabase(target);
try {
  const hash = await storedPasswordHash(password);
  const updated = await db
    .update(users)
    .set(newPasswordColumns({ hash, now: Math.floor(Date.now() / 1000) }))
    .where(eq(users.id, firstAdminId()))
    .returning({ id: users.id, username: users.username });
  const admin = updated[0];
  if (!admin) {
    console.error(`No user holds the admin role in ${describeTarget(target)}: run npm run db:migrate first.`);
    process.exitCode = 1;
  } else {
    const whom = `the admin ${JSON.stringify(admin.username)} (user id ${admin.id})`;
    console.log(command === "random" ? `New password of ${whom}: ${password}` : `Password of ${whom} updated`);
  }
} finally {
  close();
}
