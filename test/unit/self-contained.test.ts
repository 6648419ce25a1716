// The repository explains itself: no comment or doc points at a document a person who clones it
// does not have (the team's private spec, its reference notes, a path on one machine), and every
// rule a comment cites as `docs/decisions.md D4.3` is written in docs/decisions.md. AList's
// behaviour is cited by its public source instead (`AList v3.58.0 pkg/sign/hmac.go:17`).
import { readdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const THIS_FILE = relative(ROOT, import.meta.filename);
/** What is scanned: the code, its tests and scripts, the docs and the configuration a reader opens. */
const SCANNED = [
  "src",
  "scripts",
  "test",
  "docs",
  ".ci",
  "README.md",
  "CONTRIBUTING.md",
  "biome.jsonc",
  ".npmrc",
  ".editorconfig",
  "wrangler.toml",
  "package.json",
  "tsconfig.json",
  "drizzle.config.ts",
  "vitest.config.ts",
];
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".data", ".wrangler", "dist"]);
const TEXT = /\.(ts|js|mjs|cjs|jsonc?|md|toml|sh|sql|ya?ml|txt)$|^(run|\.npmrc|\.editorconfig)$/;

function files(path: string): string[] {
  const full = join(ROOT, path);
  let stat: Stats;
  try {
    stat = statSync(full);
  } catch {
    return [];
  }
  if (stat.isFile()) return TEXT.test(path.split("/").pop()!) ? [path] : [];
  return readdirSync(full)
    .filter((name) => !SKIPPED_DIRS.has(name))
    .flatMap((name) => files(`${path}/${name}`));
}

const SOURCES = SCANNED.flatMap(files).filter((path) => path !== THIS_FILE);
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Pointers outside the repository, each with what to write instead. */
const OUTSIDE: { pattern: RegExp; what: string }[] = [
  { pattern: /DECISIONS/, what: "the private DECISIONS spec (cite docs/decisions.md Dx)" },
  { pattern: /\b(FILES|API|STYLE)\.md\b/, what: "a private spec page (cite docs/decisions.md Dx or docs/*.md)" },
  { pattern: /\breference\b[^\n]{0,3}§/i, what: "the private reference notes (cite AList v3.58.0 <file>:<line>)" },
  {
    pattern: /\balist-v3\.58-[\w-]+\.md|\bopenlist-[\w-]+\.md/,
    what: "the private reference notes (cite AList v3.58.0 <file>:<line>)",
  },
  { pattern: /\.\.\/shared\b|\/work\//, what: "a path outside the repository" },
  // `AList issues #7097` (a public tracker, with its `#`) stays citable.
  { pattern: /\bissues? \d+/i, what: "this project's tracker (say what the code does, not who asked)" },
];
/** A `§` is fine only in a public standard's section number: RFC 4918 §9.1, MS-SMB2 §2.2.3. */
const STANDARD = /(RFC \d+|MS-SMB2)\b/;

function offences(path: string): string[] {
  const found: string[] = [];
  read(path)
    .split("\n")
    .forEach((line, index) => {
      const at = `${path}:${index + 1}`;
      for (const { pattern, what } of OUTSIDE)
        if (pattern.test(line)) found.push(`${at} points at ${what}: ${line.trim()}`);
      const section = line.indexOf("§");
      if (section >= 0 && !STANDARD.test(line.slice(0, section)))
        found.push(`${at} cites a § that is not a public standard's: ${line.trim()}`);
    });
  return found;
}

/** The rules docs/decisions.md defines: its areas (`## D8 …`) and their rules (`**D8.3 …`). */
function definedRules(): Set<string> {
  const text = read("docs/decisions.md");
  return new Set(
    [...text.matchAll(/^## (D\d+) /gm), ...text.matchAll(/^\*\*(D\d+\.\d+) /gm)].map((match) => match[1]!),
  );
}

/**
 * The rules a text cites after naming docs/decisions.md: `docs/decisions.md D4.3`,
 * `[decisions.md](decisions.md#…) D8`, lists and ranges (`D8.1, D8.3`, `D4.7-D4.8`), also where a
 * comment wraps between the name and the rule.
 */
function citedRules(text: string): string[] {
  const cited: string[] = [];
  const citation = /decisions\.md(?:\]\([^)\s]*\))?((?:[\s/*]*D\d+(?:\.\d+)?(?:'s)?(?:\s*(?:,|-|and)\s*(?=D\d))?)+)/g;
  for (const match of text.matchAll(citation)) cited.push(...match[1]!.match(/D\d+(?:\.\d+)?/g)!);
  return cited;
}

describe("the repository explains itself", () => {
  it("scans the code, the tests and the docs", () => {
    expect(SOURCES).toContain("src/app.ts");
    expect(SOURCES).toContain("docs/decisions.md");
    expect(SOURCES).toContain(".ci/run");
    expect(SOURCES.length).toBeGreaterThan(200);
  });

  it("no comment or doc points outside the repository", () => {
    expect(SOURCES.flatMap(offences)).toEqual([]);
  });

  it("finds the pointers it forbids", () => {
    const probe = (line: string) =>
      OUTSIDE.some(({ pattern }) => pattern.test(line)) ||
      (line.includes("§") && !STANDARD.test(line.slice(0, line.indexOf("§"))));
    const section = "§";
    for (const bad of [
      `// (DECISIONS ${section}4.4)`,
      `// (FILES.md ${section}3.9)`,
      "// (API.md)",
      `// (reference ${section}6.2)`,
      `// from the reference (${section}6.2)`,
      "// see ../shared/spec",
      "// /work/shared/reference/x.md",
      "// the fuzzing of issue 8",
      "| before issues 31-36 |",
    ])
      expect(probe(bad), bad).toBe(true);
    for (const good of [
      "// (docs/decisions.md D4.4)",
      "// (AList v3.58.0 pkg/sign/hmac.go:17-26)",
      `// (RFC 4918 ${section}9.1)`,
      `// RFC 4918 ${section}6-7, ${section}10.4`,
      "// see docs/api.md",
      "// (AList issues #7097 and #8434)",
    ])
      expect(probe(good), good).toBe(false);
  });

  it("every rule a comment or doc cites is in docs/decisions.md", () => {
    const defined = definedRules();
    const missing = SOURCES.flatMap((path) =>
      citedRules(read(path))
        .filter((rule) => !defined.has(rule))
        .map((rule) => `${path} cites ${rule}`),
    );
    expect(missing).toEqual([]);
  });

  it("the rules docs/decisions.md refers to among themselves exist", () => {
    const defined = definedRules();
    const referred = [...read("docs/decisions.md").matchAll(/\bD\d+(?:\.\d+)?\b/g)].map((match) => match[0]);
    expect(referred.filter((rule) => !defined.has(rule))).toEqual([]);
  });

  it("reads citations the way comments write them", () => {
    expect(citedRules("// (docs/decisions.md D4.3)")).toEqual(["D4.3"]);
    expect(citedRules("// (docs/decisions.md D8.1, D8.3) and D9.1 elsewhere")).toEqual(["D8.1", "D8.3"]);
    expect(citedRules("// docs/decisions.md D4.7-D4.8 and docs/decisions.md D4's fixes")).toEqual([
      "D4.7",
      "D4.8",
      "D4",
    ]);
    expect(citedRules("// … (docs/decisions.md\n  // D8.2).")).toEqual(["D8.2"]);
    expect(citedRules("[decisions.md](decisions.md#d8-fixes) D8:")).toEqual(["D8"]);
    expect(definedRules()).toContain("D4.3");
    expect(definedRules()).not.toContain("D4.11");
  });
});
