// Who is calling, as far as the request tells: address, user agent, device.
import type { Context } from "hono";
import { sha256Hex } from "./encoding.ts";

/** CF-Connecting-IP is set by Cloudflare and cannot be forged; the others matter only off Cloudflare. */
export function clientIp(c: Context): string {
  const forwarded = c.req.header("X-Forwarded-For")?.split(",")[0]?.trim();
  return c.req.header("CF-Connecting-IP") || forwarded || c.req.header("X-Real-IP") || "unknown";
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
