// npm run admin -- set-password <password> | random
// Recovers access to the admin account. Changing the password also moves pwd_ts, so every token
// issued before is rejected on its next request.
import { eq } from "drizzle-orm";
import { hashStaticHash, staticHash } from "../src/auth/password.ts";
import { randomAlphanumeric } from "../src/auth/random.ts";
import { users } from "../src/db/schema.ts";
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
  const updated = await db
    .update(users)
    .set({ passwordHash, passwordChangedAt: Math.floor(Date.now() / 1000) })
    .where(eq(users.username, "admin"))
    .returning({ id: users.id });
  if (updated.length === 0) {
    console.error(`No admin user in ${describeTarget(target)}: run npm run db:migrate first.`);
    process.exitCode = 1;
  } else {
    console.log(command === "random" ? `admin password: ${password}` : "admin password updated");
  }
} finally {
  close();
}
