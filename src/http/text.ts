import * as z from "zod/mini";

const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Names and paths: no control characters and no unpaired surrogates. A NUL cuts text short in
 * some libSQL drivers (two accounts would both read "a"), and sqld refuses broken UTF-16.
 */
export function isWellFormedText(value: string): boolean {
  return !CONTROL.test(value) && !LONE_SURROGATE.test(value);
}

export function wellFormed<T extends z.ZodMiniString>(schema: T): T {
  return schema.check(
    z.refine(isWellFormedText, { error: "must not contain control characters or unpaired surrogates" }),
  );
}
