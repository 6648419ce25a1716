// How drivers word a failure: the text becomes a storage's `status` and the reply a person reads,
// so it carries the causes and never the credentials in a URL.
import { CheckFailed, type CheckContext } from "./types.ts";

/** `cannot reach <target>: <why>`; the why is the timeout when the check's time ran out. */
export function unreachable(
  target: string,
  error: unknown,
  context: Pick<CheckContext, "signal" | "timeoutMs">,
): CheckFailed {
  const why = context.signal.aborted ? `no answer within ${seconds(context.timeoutMs)}` : errorText(error);
  return new CheckFailed(`cannot reach ${target}: ${why}`);
}

/**
 * An error's message with its causes (`fetch failed: connect ECONNREFUSED …`), with the credentials
 * of any URL in it (`//user:password@`) blanked: it becomes a storage's status and the reply.
 */
export function errorText(error: unknown): string {
  const parts: string[] = [];
  for (
    let e: unknown = error;
    e !== undefined && e !== null && parts.length < 4;
    e = e instanceof Error ? e.cause : undefined
  ) {
    const text = e instanceof Error ? e.message : String(e);
    if (text && !parts.includes(text)) parts.push(text);
  }
  return redactUserinfo(parts.join(": ") || "unknown error");
}

/** `http://user:secret@host/` → `http://***@host/`, wherever a URL's userinfo appears in the text. */
export function redactUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1***@");
}

/** `5 s`, for messages about the time a check had. */
export const seconds = (ms: number) => `${ms / 1000} s`;
