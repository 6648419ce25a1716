// Debian's Chromium driven by playwright-core, for the browser test and `npm run bench`. No browser
// is downloaded: CHROMIUM_PATH, else /usr/bin/chromium (`apt-get install chromium`, see .ci/run).
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext } from "playwright-core";

export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

export function chromiumAvailable(): boolean {
  return existsSync(chromiumPath);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * A browser context that may only talk to `origin`: anything else is aborted and recorded, so a
 * page that needs another host (a CDN, a font, a logo) shows up instead of loading quietly.
 */
export async function sameOriginContext(
  browser: Browser,
  origin: string,
): Promise<{ context: BrowserContext; blocked: string[] }> {
  const context = await browser.newContext();
  const blocked: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
  return { context, blocked };
}

export interface LoadFigures {
  requests: number;
  /** Response bodies as sent (encoded) plus response headers. */
  bytes: number;
  byPath: { method: string; path: string; status: number; bytes: number }[];
}

/**
 * Opens `path` in a fresh page and counts what the browser fetched until `readySelector` showed and
 * the network was idle after it.
 */
export async function measureLoad(
  context: BrowserContext,
  origin: string,
  path: string,
  readySelector: string,
): Promise<LoadFigures> {
  const page = await context.newPage();
  const pending: Promise<LoadFigures["byPath"][number]>[] = [];
  page.on("requestfinished", (request) => {
    pending.push(
      (async () => {
        const sizes = await request.sizes();
        const response = await request.response();
        return {
          method: request.method(),
          path: new URL(request.url()).pathname,
          status: response?.status() ?? 0,
          bytes: sizes.responseBodySize + sizes.responseHeadersSize,
        };
      })(),
    );
  });
  await page.goto(origin + path);
  await page.locator(readySelector).waitFor();
  await page.waitForLoadState("networkidle");
  const byPath = await Promise.all(pending);
  await page.close();
  return { requests: byPath.length, bytes: byPath.reduce((sum, entry) => sum + entry.bytes, 0), byPath };
}
