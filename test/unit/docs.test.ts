// The docs against the code, where a machine can tell: the routes the docs name and the routes the
// router serves, the names in the configuration tables and the names the code reads, the settings
// table and src/db/settings.ts, and every relative link. A drifted page fails here, not in a
// newcomer's hands.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { settingDefinitionByKey } from "../../src/db/settings.ts";
import { servedRoutes } from "../support/authorization-matrix.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "scripts/libsql-server/README.md",
];
/** The pages that document routes: every served route is named in one of them. */
const ROUTE_PAGES = ["docs/api.md", "docs/files.md", "docs/webdav.md"];
/** Paths the router owns; other paths in the docs are the web UI's files or the local endpoint's. */
const ROUTER_PATH = /^\/(api\/|d\/|p\/|sd\/|sad\/|a[edp]\/|ping$)/;

/** `GET /api/task/<kind>/{undone,done}` → both routes; `?query` and what follows are not the path. */
function routeMentions(markdown: string): string[] {
  const mentions: string[] = [];
  for (const [, method, path] of markdown.matchAll(/`(GET|POST|PUT|DELETE|PATCH|ALL) (\/[^\s`?]*)/g)) {
    const alternatives = /\{([^{}]*,[^{}]*)\}/.exec(path!);
    const paths = alternatives
      ? alternatives[1]!.split(",").map((choice) => path!.replace(alternatives[0], choice))
      : [path!];
    for (const one of paths) if (ROUTER_PATH.test(one)) mentions.push(`${method} ${one}`);
  }
  return mentions;
}

/** As the docs write a route: parameters as `<name>` (`/d/:path{.+}` → `/d/<path>`). */
const asDocumented = (route: { method: string; path: string }) =>
  `${route.method} ${route.path.replace(/:(\w+)(\{[^}]*\})?/g, "<$1>")}`;

describe("routes", () => {
  const app = createApp({
    database: () => {
      throw new Error("the docs test reads no database");
    },
  });
  const served = servedRoutes(app.routes).map(asDocumented);
  const documented = new Set(ROUTE_PAGES.flatMap((page) => routeMentions(read(page))));

  it("every route the router serves is named, with its method, in api.md, files.md or webdav.md", () => {
    expect(
      served.filter((route) => !documented.has(route)),
      "served but not documented",
    ).toEqual([]);
  });

  it("every route a page names is served", () => {
    // A route the router serves under ALL (/ping) answers every method.
    const isServed = (route: string) => served.includes(route) || served.includes(route.replace(/^\w+ /, "ALL "));
    const unserved = PAGES.flatMap((page) =>
      routeMentions(read(page))
        .filter((route) => !isServed(route))
        .map((route) => `${page}: ${route}`),
    );
    expect(unserved, "documented but not served").toEqual([]);
  });

  it("webdav.md documents the WebDAV server the router mounts at /dav", () => {
    expect(app.routes.some((route) => route.path === "/dav/*")).toBe(true);
    expect(read("docs/webdav.md")).toContain("`/dav`");
  });

  it("s3.md documents the S3 endpoint the router mounts at /s3", () => {
    expect(app.routes.some((route) => route.path === "/s3/*")).toBe(true);
    expect(read("docs/s3.md")).toContain("`/s3`");
  });
});

/** The rows of the first table after `heading`, as arrays of cells. */
function tableAfter(markdown: string, heading: string): string[][] {
  const at = markdown.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`no heading "${heading}"`);
  const lines = markdown.slice(at).split("\n");
  const start = lines.findIndex((line) => line.startsWith("|"));
  const table = lines.slice(
    start,
    lines.findIndex((line, i) => i > start && !line.startsWith("|")),
  );
  // The header row and the --- row are not data.
  return table.slice(2).map((line) =>
    line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );
}

const backticked = (cell: string) => [...cell.matchAll(/`([^`]*)`/g)].map((match) => match[1]!);

describe("configuration.md", () => {
  const page = read("docs/configuration.md");

  it("names exactly the variables and bindings the code reads", () => {
    const inTables = [
      ...tableAfter(page, "## What `npm start` and the scripts read"),
      ...tableAfter(page, "## Worker bindings"),
    ].flatMap((row) => backticked(row[0]!));
    // The Worker's bindings (the Env interface), and what the scripts behind npm start,
    // db:migrate, admin and webui read from the environment.
    const envInterface = /export interface Env \{([\s\S]*?)\n\}/.exec(read("src/env.ts"))![1]!;
    const bindings = [...envInterface.matchAll(/^\s+([A-Z][A-Z0-9_]*)\??:/gm)].map((match) => match[1]!);
    const scripts = ["scripts/start.ts", "scripts/db.ts", "scripts/migrate.ts", "scripts/admin.ts", "scripts/webui.ts"];
    const variables = scripts.flatMap((file) =>
      [...read(file).matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]!),
    );
    const inCode = [...new Set([...bindings, ...variables])].sort();
    expect(
      inCode.filter((name) => !inTables.includes(name)),
      "read by the code, missing from docs/configuration.md",
    ).toEqual([]);
    expect(
      inTables.filter((name) => !inCode.includes(name)),
      "in docs/configuration.md, read nowhere",
    ).toEqual([]);
  });

  it("gives each setting in its table the default of src/db/settings.ts", () => {
    const rows = tableAfter(page, "## Settings that change what Gatehouse does");
    expect(rows.length).toBeGreaterThan(0);
    for (const [key, value] of rows.map((row) => [backticked(row[0]!)[0], backticked(row[1]!)[0]])) {
      const definition = settingDefinitionByKey.get(key!);
      expect(
        definition,
        `docs/configuration.md names a setting "${key}" that src/db/settings.ts does not define`,
      ).toBeDefined();
      expect(value, `the default of ${key} in docs/configuration.md`).toBe(definition!.value);
    }
  });
});

it("every relative link in README.md and docs/ leads to a file that exists", () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!) || target!.startsWith("#")) continue;
      const file = target!.split("#")[0]!;
      if (!existsSync(resolve(ROOT, dirname(page), file))) broken.push(`${page}: ${target}`);
    }
  }
  expect(broken, "links to files that do not exist").toEqual([]);
});

describe("architecture.md", () => {
  const FEATURES = join(ROOT, "src/features");
  /** Every feature has these; a folder holding more has roles a reader must be told about. */
  const COMMON = new Set(["routes.ts", "docs.ts", "rules.ts", "store.ts", "messages.ts", "README.md"]);
  const ownFiles = (feature: string) =>
    readdirSync(join(FEATURES, feature)).filter((name) => !name.endsWith(".test.ts") && !COMMON.has(name));
  const withRoles = readdirSync(FEATURES).filter((feature) => ownFiles(feature).length > 0);
  const architecture = read("docs/architecture.md");

  it("names every feature folder that holds more than the common five files", () => {
    expect(withRoles.length).toBeGreaterThan(10);
    expect(withRoles.filter((feature) => !architecture.includes(`${feature}/`))).toEqual([]);
  });

  it("gives every file of such a folder its role, there or in the folder's README.md", () => {
    const unnamed = withRoles.flatMap((feature) => {
      const readme = join(FEATURES, feature, "README.md");
      const pages = architecture + (existsSync(readme) ? readFileSync(readme, "utf8") : "");
      return ownFiles(feature)
        .filter((file) => !pages.includes(file))
        .map((file) => `src/features/${feature}/${file}`);
    });
    expect(unnamed).toEqual([]);
  });
});
