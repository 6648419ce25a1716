// What the WebDAV suites inside workerd do as a client of /dav: Basic credentials (those of
// makeUser's accounts too), a request from an address of the test's choosing, the hrefs of a
// multistatus. The upstreams read directly are in upstreams.ts.
import { exports } from "cloudflare:workers";
import { Permission } from "../../src/features/fs/rules.ts";
import { INTEGRATION_ADMIN_PASSWORD } from "./integration-constants.ts";

export const basic = (username: string, password: string) =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${username}:${password}`)))}`;
export const ADMIN_BASIC = basic("admin", INTEGRATION_ADMIN_PASSWORD);

/** The permission bits of a role scope, and every bit at once. */
export const Bits = { ...Permission, ALL: 0xffff } as const;

export interface DavInit {
  /** Basic or Bearer; the admin's Basic unless told, none with null. */
  auth?: string | null;
  headers?: Record<string, string>;
  body?: BodyInit;
  ip?: string;
}

/** A request to the Worker's /dav; `path` is sent as written (escape it yourself). */
export function dav(method: string, path: string, init: DavInit = {}): Promise<Response> {
  const headers: Record<string, string> = { "CF-Connecting-IP": init.ip ?? "198.51.100.250", ...init.headers };
  const auth = init.auth === undefined ? ADMIN_BASIC : init.auth;
  if (auth !== null) headers.Authorization = auth;
  // Redirects are the client's to follow: followed here, they would come back to this Worker.
  return exports.default.fetch(
    new Request(`http://gatehouse.test/dav${path}`, {
      method,
      headers,
      redirect: "manual",
      ...(init.body === undefined ? {} : { body: init.body }),
    }),
  );
}

/** The hrefs of a multistatus body, in order. */
export const hrefs = (xml: string) => [...xml.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]);

/** The Basic credentials makeUser (workerd-client.ts) gave `username`. */
export const basicOf = (username: string) => basic(username, `${username} password`);
