// The web UI: the prebuilt OpenList front end (npm @openlist-frontend/openlist-frontend, MIT),
// unpacked into webui/ for Workers Static Assets ([assets] in wrangler.toml). Runs as the root
// `postinstall` script (so `npm ci` does it) and again from `npm start`; a stamp file makes a
// second run free. `npm install` of the package fails (its dependencies are GitHub tarballs only
// its build needs), so the tarball is fetched with `npm pack` (npm's registry, proxy and cache
// settings apply) and checked against the integrity pinned here before anything is unpacked.
//
//   GATEHOUSE_WEB_UI=off  installs no UI: webui/ holds only the OpenAPI document and the access keys page, and the
//                         Worker answers every other path outside the API with the JSON 404 envelope, as an
//                         API-only deploy should.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const WEB_UI_PACKAGE = "@openlist-frontend/openlist-frontend";
export const WEB_UI_VERSION = "4.2.6";
/** The registry's `dist.integrity` for that version (`npm view <package>@<version> dist.integrity`). */
export const WEB_UI_INTEGRITY =
  "sha512-ebWZEFHyBcQzNcaa8vE6U5LaCHAYblrUzOErGr+N/DBuFqnjBk7AqaPEAiJIbANSb+uu32KPxgc9pY8lF+NZ9w==";

const root = fileURLToPath(new URL("..", import.meta.url));
export const webUiDir = join(root, "webui");
const STAMP = ".gatehouse-webui.json";

/**
 * The OpenAPI document GET /api/openapi.json serves. The Worker reads it through its assets binding
 * (src/app.ts), so its 75 KiB are not in the bundle nor parsed at each cold start. Compact, as
 * the Worker answered it before. Only the Worker reaches it: wrangler.toml runs the Worker first
 * for /api/*.
 */
export const OPENAPI_ASSET = "api/openapi.json";
const OPENAPI_SOURCE = join(root, "src/generated/openapi.json");

/**
 * The access keys page GET /@keys serves (src/features/access-keys/page.ts), read by the Worker
 * through its assets binding too, so its 6 KB are not in the bundle. Only the Worker reaches it:
 * wrangler.toml runs the Worker first for every path outside the UI's build folders.
 */
export const KEYS_PAGE_ASSET = "@keys.html";
const KEYS_PAGE_SOURCE = join(root, "src/features/access-keys/page.html");

/**
 * Copies the files the Worker serves from the assets folder, web UI or not: the generated
 * document (src/generated/openapi.json, compact) and the access keys page.
 */
export function publishOwnAssets(dir: string = webUiDir, source: string = OPENAPI_SOURCE): void {
  publish(join(dir, OPENAPI_ASSET), JSON.stringify(JSON.parse(readFileSync(source, "utf8"))));
  publish(join(dir, KEYS_PAGE_ASSET), readFileSync(KEYS_PAGE_SOURCE, "utf8"));
}

function publish(target: string, text: string): void {
  if (existsSync(target) && readFileSync(target, "utf8") === text) return;
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
}

// Only the content-hashed build output may be cached for good. The other folders keep their names
// across front-end versions, so they are revalidated (the assets layer sends an ETag) after a day.
const HEADERS = `/assets/*
  Cache-Control: public, max-age=31536000, immutable
/static/*
  Cache-Control: public, max-age=86400
/images/*
  Cache-Control: public, max-age=86400
/streamer/*
  Cache-Control: public, max-age=86400
`;

interface Stamp {
  package: string;
  version: string;
  integrity: string;
  /** Of the default logo shipped with the UI (scripts/webui-logo.svg), so an edit re-runs the copy. */
  logo: string;
}

// The default `logo` and `favicon` settings point here, so a fresh install needs no other host.
const LOGO_SOURCE = join(root, "scripts/webui-logo.svg");
const LOGO_TARGET = "images/logo.svg";

export interface WebUiOptions {
  env?: NodeJS.ProcessEnv;
  /** Tests point these elsewhere; everything else uses the pinned values and webui/. */
  dir?: string;
  version?: string;
  integrity?: string;
}

/** Makes webui/ match the pinned version (or the API-only switch); returns what it did. */
export function ensureWebUi(options: WebUiOptions = {}): "present" | "installed" | "off" {
  const { env = process.env, dir = webUiDir, version = WEB_UI_VERSION, integrity = WEB_UI_INTEGRITY } = options;
  const off = env.GATEHOUSE_WEB_UI === "off";
  const logo = createHash("sha256").update(readFileSync(LOGO_SOURCE)).digest("hex");
  const wanted: Stamp = off
    ? { package: "none", version: "off", integrity: "", logo: "" }
    : { package: WEB_UI_PACKAGE, version, integrity, logo };
  if (sameStamp(readStamp(dir), wanted)) {
    publishOwnAssets(dir);
    return off ? "off" : "present";
  }

  // Everything goes into a sibling folder that replaces webui/ in one rename: an interrupted or
  // failed run leaves the previous folder (or none), never half of one.
  const staging = mkdtempSync(join(dirname(dir), ".webui-staging-"));
  try {
    const assets = join(staging, "webui");
    mkdirSync(assets);
    if (!off) unpackInto(assets, staging, version, integrity);
    // Not uploaded as assets: the stamp is bookkeeping. (.assetsignore itself is skipped by wrangler.)
    writeFileSync(join(assets, ".assetsignore"), `${STAMP}\n`);
    writeFileSync(join(assets, STAMP), `${JSON.stringify(wanted, null, 2)}\n`);
    const previous = join(staging, "previous");
    if (existsSync(dir)) renameSync(dir, previous);
    renameSync(assets, dir);
    publishOwnAssets(dir);
    return off ? "off" : "installed";
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function unpackInto(assets: string, staging: string, version: string, pinned: string): void {
  const spec = `${WEB_UI_PACKAGE}@${version}`;
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];
  const packed = spawnSync(
    npm[0]!,
    [...npm.slice(1), "pack", spec, "--pack-destination", staging, "--json", "--loglevel=error"],
    {
      encoding: "utf8",
      cwd: staging,
    },
  );
  if (packed.status !== 0)
    fail(
      `could not download ${spec} from the npm registry (npm pack exited ${packed.status ?? packed.signal}): ${lastLines(packed.stderr)}`,
    );
  const tarballs = readdirSync(staging).filter((name) => name.endsWith(".tgz"));
  if (tarballs.length !== 1) fail(`npm pack ${spec} left ${tarballs.length} tarballs, expected one`);
  const tarball = join(staging, tarballs[0]!);

  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  if (integrity !== pinned) {
    fail(
      `${spec} does not match its pinned integrity.\n  expected ${pinned}\n  got      ${integrity}\nNothing was unpacked.`,
    );
  }

  // dist/ only; dist/lite is a second, smaller build the Worker never serves.
  const untar = spawnSync(
    "tar",
    ["-xzf", tarball, "-C", assets, "--strip-components=2", "--exclude=package/dist/lite", "package/dist"],
    { encoding: "utf8" },
  );
  if (untar.status !== 0) fail(`could not unpack ${tarball}: ${lastLines(untar.stderr)}`);
  const license = spawnSync("tar", ["-xzf", tarball, "-C", staging, "package/LICENSE"], { encoding: "utf8" });
  if (license.status !== 0) fail(`could not unpack the license of ${spec}: ${lastLines(license.stderr)}`);
  if (!existsSync(join(assets, "index.html"))) fail(`${spec} has no dist/index.html`);
  // The MIT notice travels with the files it covers.
  renameSync(join(staging, "package/LICENSE"), join(assets, "LICENSE"));
  copyFileSync(LOGO_SOURCE, join(assets, LOGO_TARGET));
  writeFileSync(join(assets, "_headers"), HEADERS);
}

function readStamp(dir: string): Stamp | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, STAMP), "utf8")) as Stamp;
  } catch {
    return undefined;
  }
}

function sameStamp(a: Stamp | undefined, b: Stamp): boolean {
  return a?.package === b.package && a.version === b.version && a.integrity === b.integrity && a.logo === b.logo;
}

function lastLines(text: string | null | undefined): string {
  return (text ?? "").trim().split("\n").slice(-5).join("\n") || "(no output)";
}

export class WebUiError extends Error {}
function fail(message: string): never {
  throw new WebUiError(message);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const outcome = ensureWebUi();
    if (outcome === "installed") console.log(`Web UI: ${WEB_UI_PACKAGE}@${WEB_UI_VERSION} unpacked into webui/`);
    if (outcome === "off")
      console.log(
        "Web UI: off (GATEHOUSE_WEB_UI=off); webui/ holds only the OpenAPI document and the access keys page",
      );
  } catch (error) {
    console.error(`Web UI: ${(error as Error).message}`);
    process.exit(1);
  }
}
