// npm run admin -- set-password <password> | random
// Recovers access to the admin account: the account holding the admin role (the first by id, as
// the permanent token's admin), whatever it is called now; any user can take the name "admin" once
// the admin renames itself. Changing the password also moves pwd_ts strictly forward, so every
// token issued before is rejected on its next request.
import { sql } from "drizzle-orm";
import { hashStaticHash, staticHash } from "../src/auth/password.ts";
import { randomAlphanumeric } from "../src/auth/random.ts";
import { users } from "../src/db/schema.ts";
import { ADMIN_ROLE_ID } from "../src/auth/roles.ts";
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
  const passwordHash = await hashStaticHash(await staticHash(password));
  const adminId = sql`(SELECT id FROM ${users} WHERE EXISTS (SELECT 1 FROM json_each(${users.roleIds}) WHERE value = ${ADMIN_ROLE_ID}) ORDER BY id LIMIT 1)`;
  const updated = await db
    .update(users)
    .set({ passwordHash, passwordChangedAt: sql`max(${Math.floor(Date.now() / 1000)}, ${users.passwordChangedAt} + 1)` })
    .where(sql`${users.id} = ${adminId}`)
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
