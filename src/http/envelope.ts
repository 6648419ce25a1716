import type { Context } from "hono";
import type { ApiCode } from "./errors.ts";

interface Envelope<T> {
  code: ApiCode;
  message: string;
  data: T;
}

/** Writes the `{code, message, data}` envelope. With okJson below, the one place a JSON reply is made. */
export function envelope<T>(c: Context, code: ApiCode, message: string, data: T) {
  c.set("envelopeCode", code);
  return c.json({ code, message, data } satisfies Envelope<T>, 200);
}

export function ok<T>(c: Context, data: T) {
  return envelope(c, 200, "success", data);
}

/** The success envelope around `data` that is JSON already (built by SQLite: storages/store.ts). */
export function okJson(c: Context, data: string) {
  c.set("envelopeCode", 200);
  return c.body(`{"code":200,"message":"success","data":${data}}`, 200, { "Content-Type": "application/json" });
}
