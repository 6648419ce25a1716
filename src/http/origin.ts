// Where clients reach this server, for the absolute links a reply hands out (raw_url, /p, /sd, /ae).
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";

/** The address clients reach this server at: `site_url` when it is absolute, else the request's. */
export function apiUrl(c: Context<AppEnv>, siteUrl: string): string {
  if (/^https?:\/\//i.test(siteUrl)) return siteUrl.replace(/\/+$/, "");
  const url = new URL(c.req.url);
  const proto = c.req.header("X-Forwarded-Proto") === "https" ? "https:" : url.protocol;
  return `${proto}//${c.req.header("X-Forwarded-Host") ?? url.host}`;
}
