// Every API call the served web UI's scripts make is a route of the app: the calls are read out of
// the bundle in webui/ (its axios instance's `.get`/`.post`/`.put` with a path under /api), so a UI
// upgrade that calls something new fails here until Gatehouse answers it (docs/decisions.md D18.6).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { webUiDir } from "../../scripts/webui.ts";
import { servedRoutes } from "../support/authorization-matrix.ts";
import { createUnitFixture } from "../support/unit.ts";

/**
 * Identity routes another piece of work builds (passkeys, single sign-on, LDAP). Each is listed by
 * the pattern of its paths; nothing else may be missing.
 */
const IDENTITY_ROUTES: readonly RegExp[] = [
  /^\/api\/authn\//, // WebAuthn passkeys: begin/finish login and registration, credentials, delete
  /^\/api\/auth\/sso/, // single sign-on (OIDC and the rest)
  /^\/api\/auth\/login\/ldap$/, // LDAP sign-in
];

/** The API prefixes the UI's axios instance (baseURL /api) calls; anything else is a page path. */
const API_PREFIX = /^\/(admin|fs|public|auth|authn|me|task|share)(\/|$|\?)/;

interface UiCall {
  method: "GET" | "POST" | "PUT";
  /** The path as the script writes it, `${…}` included. */
  source: string;
  /** Every concrete form the path takes: `${x ? `a` : `b`}` gives both; any other `${…}` is a wildcard. */
  patterns: RegExp[];
}

/** Reads a template literal starting after its opening backtick; its parts and where it ends. */
function readTemplate(text: string, start: number): { parts: (string | string[] | null)[]; end: number } {
  const parts: (string | string[] | null)[] = [];
  let literal = "";
  let i = start;
  while (i < text.length && text[i] !== "`") {
    if (text[i] === "$" && text[i + 1] === "{") {
      parts.push(literal);
      literal = "";
      // An expression: find its end, collecting the plain backtick strings inside (a ternary's arms).
      let depth = 1;
      const strings: string[] = [];
      let plain = true;
      i += 2;
      while (i < text.length && depth > 0) {
        const char = text[i];
        if (char === "{") depth++;
        else if (char === "}") depth--;
        else if (char === "`") {
          const inner = readTemplate(text, i + 1);
          if (inner.parts.length === 1 && typeof inner.parts[0] === "string") strings.push(inner.parts[0]);
          else plain = false;
          i = inner.end;
        }
        i++;
      }
      parts.push(plain && strings.length > 0 ? strings : null);
      continue;
    }
    literal += text[i];
    i++;
  }
  parts.push(literal);
  return { parts, end: i };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function uiCalls(): UiCall[] {
  const dir = join(webUiDir, "assets");
  const calls = new Map<string, UiCall>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".js"))) {
    const text = readFileSync(join(dir, file), "utf8");
    for (const match of text.matchAll(/\.(get|post|put)\(`/g)) {
      const { parts, end } = readTemplate(text, match.index + match[0].length);
      const source = text.slice(match.index + match[0].length, end);
      if (!API_PREFIX.test(source)) continue;
      // Every combination of the alternatives; the query string is not part of the route.
      let forms: string[] = [""];
      for (const part of parts) {
        const options =
          part === null
            ? ["\u0000"]
            : typeof part === "string"
              ? [part]
              : part.map((option) => option.replace(/[\\^$.*+?()[\]{}|]/g, ""));
        forms = forms.flatMap((form) => options.map((option) => form + option));
      }
      const patterns = [...new Set(forms.map((form) => form.split("?")[0]!))].map(
        (path) => new RegExp(`^/api${escapeRegExp(path).replaceAll("\u0000", "[^/]*")}$`),
      );
      const method = match[1]!.toUpperCase() as UiCall["method"];
      calls.set(`${method} ${source}`, { method, source, patterns });
    }
  }
  return [...calls.values()];
}

describe("the served web UI's API calls", () => {
  const calls = uiCalls();

  it("are found in the bundle (the extraction reads what it should)", () => {
    expect(calls.length).toBeGreaterThan(80);
    const sources = calls.map((call) => `${call.method} ${call.source}`);
    expect(sources).toContain("GET /admin/scan/progress");
    expect(sources).toContain("POST /fs/torrent/parse");
    expect(sources).toContain("PUT /fs/put");
  });

  it("each answer from a route of the app, or are identity routes named above", async () => {
    const fixture = await createUnitFixture();
    try {
      const routes = servedRoutes(fixture.app.routes).filter((route) => route.path.startsWith("/api/"));
      const missing: string[] = [];
      for (const call of calls) {
        for (const pattern of call.patterns) {
          const routed = routes.some(
            (route) => (route.method === call.method || route.method === "ALL") && pattern.test(route.path),
          );
          const identity = IDENTITY_ROUTES.some((identityRoute) => identityRoute.test(`/api${call.source}`));
          if (!routed && !identity) missing.push(`${call.method} /api${call.source} (${pattern.source})`);
        }
      }
      expect(missing).toEqual([]);
    } finally {
      fixture.close();
    }
  });
});
