// Who is calling, as far as the request tells: address, user agent, device.
import type { Context } from "hono";
import type { AppEnv } from "../http/context.ts";
import { sha256Hex } from "./encoding.ts";

/** Longer than any IPv6 address in text form (45): anything longer is not an address. */
const MAX_IP_LENGTH = 45;
/** The one address every caller has when the client's own headers cannot be believed. */
const UNTRUSTED_IP = "local";

/**
 * The caller's address. On Cloudflare, CF-Connecting-IP is set by the edge and cannot be forged;
 * anywhere else (wrangler dev) the client sends it, so it is believed only with
 * TRUST_CF_CONNECTING_IP = "true" (wrangler.toml, for production). X-Forwarded-For and X-Real-IP
 * are never believed: every client can send them, on Cloudflare too.
 */
export function clientIp(c: Context<AppEnv>): string {
  if (c.env?.TRUST_CF_CONNECTING_IP !== "true") return UNTRUSTED_IP;
  return (c.req.header("CF-Connecting-IP") || "unknown").trim().slice(0, MAX_IP_LENGTH);
}

export function userAgent(c: Context): string {
  return (c.req.header("User-Agent") ?? "").slice(0, 255);
}

/** The client's own id for its device: `Client-Id` header, else the `client_id` query parameter. */
export function clientId(c: Context): string | undefined {
  return c.req.header("Client-Id") || c.req.query("client_id") || undefined;
}

/**
 * Hides the middle of an address, as AList stores it: 192.168.1.23 → 192.*.*.23,
 * 2001:db8:85a3::8a2e:370:7334 → 2001:*:*::*:*:7334. Anything else is kept as it is.
 */
export function maskIp(ip: string): string {
  if (ip.includes(":")) {
    const parts = ip.split(":");
    if (parts.length <= 2) return ip;
    return parts.map((part, i) => (i === 0 || i === parts.length - 1 || part === "" ? part : "*")).join(":");
  }
  const parts = ip.split(".");
  return parts.length === 4 ? [parts[0], "*", "*", parts[3]].join(".") : ip;
}

/**
 * The device session key: deterministic per (user, Client-Id), so a stable Client-Id keeps its
 * session. Without a Client-Id each login gets a random one, hence a session of its own.
 */
export async function deviceKey(userId: number, client: string | undefined): Promise<string> {
  return (await sha256Hex(`${userId}-${client ?? crypto.randomUUID()}`)).slice(0, 32);
}
