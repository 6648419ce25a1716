// The WebDAV server at /dav (RFC 4918 class 1 and 2) on the file layer of /api/fs: the same mount
// tree, permissions (WebDAV read and manage bits, AList v3.58.0 server/webdav.go:129-150), metas,
// base path and storage policies. Bodies stream both ways. This file is the dispatch: which method
// goes where, and every refusal as a reply. The request each method starts from is request.ts; the
// methods are read.ts (GET, HEAD), properties.ts (PROPFIND, PROPPATCH), write.ts (PUT, MKCOL,
// DELETE), transfer.ts (COPY, MOVE) and locks.ts (LOCK, UNLOCK); their decisions (paths, headers,
// permissions, locks) are rules.ts and the texts they answer messages.ts.
import type { Context } from "hono";
import type { AppEnv } from "../../http/context.ts";
import { isTransientDatabaseFailure } from "../../db/errors.ts";
import { ApiError, FileError } from "../../http/errors.ts";
import { lock, unlock } from "./locks.ts";
import { BASIC_CHALLENGE, methodNotAnswered, SERVER_BUSY, SERVER_FAILED } from "./messages.ts";
import { propfind, proppatch } from "./properties.ts";
import { get } from "./read.ts";
import { READ_METHODS, readRequest, requireRead, type DavRequest } from "./request.ts";
import { DavError, davStatusOf } from "./rules.ts";
import { copyOrMove } from "./transfer.ts";
import { mkcol, put, remove } from "./write.ts";

/** Each method and its handler, in the order `Allow` lists them; OPTIONS is answered before sign-in. */
const HANDLERS = {
  GET: get, // read.ts
  HEAD: get, // read.ts
  PUT: put, // write.ts
  DELETE: (request) => remove(request, request.depth), // write.ts
  MKCOL: mkcol, // write.ts
  COPY: (request) => copyOrMove(request, "COPY", request.destination!, request.depth), // transfer.ts
  MOVE: (request) => copyOrMove(request, "MOVE", request.destination!, request.depth), // transfer.ts
  PROPFIND: (request) => propfind(request, request.depth), // properties.ts
  PROPPATCH: proppatch, // properties.ts
  LOCK: (request) => lock(request, request.depth), // locks.ts
  UNLOCK: unlock, // locks.ts
} satisfies Record<string, (request: DavRequest) => Promise<Response>>;
type DavMethod = keyof typeof HANDLERS;

const METHODS = ["OPTIONS", ...Object.keys(HANDLERS)].join(", ");
const isDavMethod = (method: string): method is DavMethod => Object.hasOwn(HANDLERS, method);

export async function handleDav(c: Context<AppEnv>): Promise<Response> {
  try {
    return await dispatch(c);
  } catch (error) {
    return errorReply(error, c.get("requestId"));
  }
}

async function dispatch(c: Context<AppEnv>): Promise<Response> {
  const method = c.req.method.toUpperCase();
  // Clients probe OPTIONS before they sign in: it says what the server speaks and reads nothing.
  if (method === "OPTIONS")
    return new Response(null, {
      status: 200,
      headers: { DAV: "1, 2", "MS-Author-Via": "DAV", Allow: METHODS, "Content-Length": "0" },
    });
  if (!isDavMethod(method)) throw new DavError(405, methodNotAnswered(method));
  const request = await readRequest(c, method);
  if (READ_METHODS.has(method)) requireRead(request, request.path, method === "PROPFIND");
  return HANDLERS[method](request);
}

/**
 * Every refusal as a WebDAV reply: its own (the sign-in's among them), the file side's by kind
 * (davStatusOf), and any other failure as the server's (logged with `requestId`).
 */
export function errorReply(error: unknown, requestId = ""): Response {
  if (error instanceof DavError) {
    if (error.condition) {
      return new Response(
        `<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:">${error.condition}</D:error>\n`,
        {
          status: error.status,
          headers: { "Content-Type": "application/xml; charset=utf-8" },
        },
      );
    }
    const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8" };
    // A 401 asks for credentials; a 429 (the sign-in lockout) says when to try again.
    if (error.status === 401) headers["WWW-Authenticate"] = BASIC_CHALLENGE;
    if (error.status === 429) headers["Retry-After"] = "300";
    if (error.status === 405) headers.Allow = METHODS;
    return new Response(`${error.message}\n`, { status: error.status, headers });
  }
  if (error instanceof FileError) return errorReply(new DavError(davStatusOf(error.kind), error.message));
  // A shared rule of the file side (an Alias target's meta, say) refuses with the API's error; its
  // envelope code is an HTTP status already.
  if (error instanceof ApiError) return errorReply(new DavError(error.code, error.message));
  if (error instanceof Error && error.name === "AbortError") return new Response(null, { status: 499 });
  // A fault of the server: never the API's envelope (HTTP 200, which a WebDAV client takes for an
  // answer), but a 5xx; 503 when the database could not serve now and a try later may pass.
  console.error(
    JSON.stringify({
      requestId,
      error: error instanceof Error ? error.message : String(error),
      stack: error instanceof Error ? error.stack : undefined,
    }),
  );
  const transient = isTransientDatabaseFailure(error);
  return new Response(`${transient ? SERVER_BUSY : SERVER_FAILED} (request id ${requestId})\n`, {
    status: transient ? 503 : 500,
    headers: { "Content-Type": "text/plain; charset=utf-8", ...(transient ? { "Retry-After": "5" } : {}) },
  });
}
