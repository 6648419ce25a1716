// npm run openapi: writes src/generated/openapi.json, the document GET /api/openapi.json serves
// (copied into the assets folder, webui/api/openapi.json, where the Worker reads it),
// from the route definitions the app registers (createRoute in src/features/*/routes.ts, and the
// few registered by hand) joined to their documentation (src/features/*/docs.ts, by method and
// path: src/http/docs.ts). Built here, in Node, so the Worker ships neither the generator
// (@asteasolutions/zod-to-openapi, through @hono/zod-openapi), the schemas' metadata nor the
// routes' summaries and responses.
//   --check   write nothing; exit 1 when the committed file differs (test/unit/openapi.test.ts)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { register } from "node:module";
import { fileURLToPath } from "node:url";
import type { RouteConfig } from "@hono/zod-openapi";
import { publishOwnAssets } from "./webui.ts";

// Nothing from src/ or scripts/db.ts is imported statically: see the next comment.
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DOCUMENT_FILE = join(projectRoot, "src/generated/openapi.json");

// First: loading @hono/zod-openapi gives zod's `.openapi()` its real meaning (metadata the generator
// reads) before any route schema is built. The Worker's stand-in (src/http/openapi.ts) then stays out.
const { OpenAPIHono } = await import("@hono/zod-openapi");
// Route schemas are zod/mini in the Worker; here they are built with classic zod instead, the same
// functions with the same meaning, because the generator reads classic schemas (src/http/openapi.ts).
register(
  `data:text/javascript,${encodeURIComponent('export const resolve = (specifier, context, next) => next(specifier === "zod/mini" ? "zod" : specifier, context);')}`,
);
const { createApp } = await import("../src/app.ts");
const { routeDocs } = await import("../src/docs.ts");
const { documentedDefinitions } = await import("../src/http/docs.ts");
const { GATEHOUSE_VERSION } = await import("../src/version.ts");

const app = createApp({
  database: () => {
    throw new Error("building the OpenAPI document reads no database");
  },
});
const generator = new OpenAPIHono();
for (const definition of documentedDefinitions(app.openAPIRegistry.definitions, routeDocs)) {
  // The definitions hold classic zod schemas here (see the resolve hook above): what the generator reads.
  if (definition.type === "route") generator.openAPIRegistry.registerPath(definition.route as RouteConfig);
  else
    generator.openAPIRegistry.registerComponent(
      definition.componentType as "schemas",
      definition.name,
      definition.component as object,
    );
}
const document = generator.getOpenAPI31Document({
  openapi: "3.1.0",
  info: { title: "Gatehouse", version: GATEHOUSE_VERSION, description: "AList-compatible management and identity API" },
});
const text = `${JSON.stringify(document, null, 2)}\n`;
const name = relative(projectRoot, DOCUMENT_FILE);

if (process.argv.includes("--check")) {
  if (readFileSync(DOCUMENT_FILE, "utf8") !== text) {
    console.error(`${name} is stale: the route definitions changed. Run \`npm run openapi\` and commit the file.`);
    process.exit(1);
  }
  console.log(`${name} is up to date`);
} else {
  if (!existsSync(DOCUMENT_FILE) || readFileSync(DOCUMENT_FILE, "utf8") !== text) {
    writeFileSync(DOCUMENT_FILE, text);
    console.log(`Wrote ${name} (${Object.keys(document.paths ?? {}).length} paths)`);
  }
  // The copy the Worker serves, in the assets folder, with the access keys page (scripts/webui.ts).
  publishOwnAssets();
}
