import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { TokenError } from "../auth/tokens.ts";
import { ConfigError } from "../env.ts";
import { envelope } from "./envelope.ts";
import { ApiError, FileError, isExpectedAnswer } from "./errors.ts";

/**
 * Maps every thrown error to an envelope: the API's own errors, the domain errors that have a fixed
 * answer, and Hono's. Unexpected errors are logged with the request id, never sent.
 */
export function handleError(error: Error, c: Context) {
  if (error instanceof ApiError) {
    if (error instanceof FileError && isExpectedAnswer(error.kind)) c.set("expectedFailure", true);
    return envelope(c, error.code, error.message, error.data);
  }
  if (error instanceof TokenError) return envelope(c, 401, error.message, null);
  if (error instanceof ConfigError) return envelope(c, 500, `server misconfigured: ${error.message}`, null);
  if (error instanceof HTTPException && error.status === 400) {
    // Hono's validator throws this for a body that is not JSON.
    return envelope(c, 400, `malformed JSON body: ${error.message}`, null);
  }
  if (error instanceof HTTPException && error.status === 413) return payloadTooLarge(c);
  if (error instanceof HTTPException && error.status === 415) {
    // A route that takes JSON got another Content-Type, e.g. a form from a plain `curl -d`.
    return envelope(c, 400, "the request body must be JSON, sent with Content-Type: application/json", null);
  }
  console.error(JSON.stringify({ requestId: c.get("requestId"), error: error.message, stack: error.stack }));
  return envelope(c, 500, `internal error (request id ${c.get("requestId")})`, null);
}

export function payloadTooLarge(c: Context) {
  return envelope(c, 413, "request body too large", null);
}
