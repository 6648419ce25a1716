import { defineConfig } from "drizzle-kit";

// Only `npm run db:generate` reads this: it diffs src/db/schema.ts against drizzle/ and writes
// the next SQL migration. Applying migrations is `npm run db:migrate` (scripts/migrate.ts).
export default defineConfig({
  dialect: "turso",
  schema: "./src/db/schema.ts",
  out: "./drizzle",
});
