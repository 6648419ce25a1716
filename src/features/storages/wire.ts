// The storage on the wire: the JSON AList clients read (snake_case, `addition` a JSON string;
// SQLite writes it, store.ts `storageJson`), and the create/update body turned into a row, with
// what the body leaves out taken from the driver's template (docs/decisions.md D3.8: the web UI
// sends only the items its form shows).
import * as z from "zod/mini";
import "../../http/openapi.ts";
import { parseAddition } from "../../drivers/addition.ts";
import { commonItems } from "../../drivers/items.ts";
import type { Driver } from "../../drivers/types.ts";
import type { storages } from "../../db/schema.ts";
import { wellFormed } from "../../http/text.ts";
import { ApiError } from "../../http/errors.ts";
import { cleanPath } from "../../lib/path.ts";
import { ADDITION_NOT_AN_OBJECT, choiceNotAllowed, ID_NOT_POSITIVE, ID_REQUIRED } from "./messages.ts";

export type StorageRow = typeof storages.$inferSelect;
/** What create and update write: every column but the id and the status. */
export type StorageValues = Omit<StorageRow, "id" | "status" | "disabled">;

export const Storage = z
  .object({
    id: z.number().check(z.int()),
    mount_path: z.string(),
    order: z.number().check(z.int()),
    driver: z.string(),
    cache_expiration: z.number().check(z.int()),
    status: z.string().openapi({ description: "`work`, `disabled`, or what the last check found wrong" }),
    addition: z.string().openapi({ description: "driver settings: a JSON object encoded as a string" }),
    remark: z.string(),
    modified: z.string().openapi({ description: "RFC 3339" }),
    disabled: z.boolean(),
    disable_index: z.boolean(),
    enable_sign: z.boolean(),
    order_by: z.string(),
    order_direction: z.string(),
    extract_folder: z.string(),
    web_proxy: z.boolean(),
    webdav_policy: z.string(),
    proxy_range: z.boolean(),
    down_proxy_url: z.string(),
    down_proxy_sign: z.boolean(),
  })
  .openapi("Storage");

/** An integer as JSON number or as a numeric string (forms and scripts send both). */
const integerLike = z.union(
  [z.number().check(z.int()), z.pipe(z.string().check(z.regex(/^-?[0-9]{1,15}$/)), z.transform(Number))],
  { error: "must be an integer" },
);
/** `enable_sign` is declared a string and sent as a boolean (docs/decisions.md D3.8): both are fine. */
const booleanLike = z.union(
  [
    z.boolean(),
    z.pipe(
      z.enum(["true", "false"]),
      z.transform((v) => v === "true"),
    ),
  ],
  { error: "must be true or false" },
);

/** A string that must be present and non-empty, with "is required" when it is not. */
const requiredText = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : undefined) })
    .check(z.minLength(1, { error: "is required" }), z.maxLength(max));

export const StorageBody = z
  .object({
    id: z
      .optional(z.unknown())
      .openapi({ type: "integer", description: "update only: the storage to change (a number or a numeric string)" }),
    mount_path: wellFormed(requiredText(1024)),
    order: z.nullish(integerLike),
    driver: requiredText(64),
    remark: z.nullish(z.string().check(z.maxLength(4096))),
    cache_expiration: z.nullish(z.pipe(integerLike, z.number().check(z.gte(0, { error: "must not be negative" })))),
    status: z.nullish(z.string()).openapi({ description: "ignored: the server computes it" }),
    web_proxy: z.nullish(z.boolean()),
    webdav_policy: z.nullish(z.string()),
    down_proxy_url: z.nullish(z.string().check(z.maxLength(4096))),
    down_proxy_sign: z.nullish(z.boolean()),
    order_by: z.nullish(z.string()),
    order_direction: z.nullish(z.string()),
    extract_folder: z.nullish(z.string()),
    addition: z
      .optional(z.unknown())
      .openapi({ type: "string", description: "driver settings: a JSON object encoded as a string" }),
    enable_sign: z.nullish(booleanLike),
    disable_index: z.nullish(z.boolean()),
    proxy_range: z.nullish(z.boolean()),
    disabled: z.nullish(z.boolean()).openapi({ description: "absent: create enabled, update keeps the current value" }),
  })
  .openapi("StorageBody");

export type StorageBodyInput = z.infer<typeof StorageBody>;

/** The `id` of an update body: a positive integer, as a number or a numeric string. */
export function storageId(id: unknown): number {
  if (id === undefined || id === null) throw new ApiError(400, ID_REQUIRED);
  const text = typeof id === "number" ? String(id) : typeof id === "string" ? id : "";
  if (!/^[1-9][0-9]{0,14}$/.test(text)) throw new ApiError(400, ID_NOT_POSITIVE);
  return Number(text);
}

/** The row a body describes for `driver`; 400 for an addition that is not an object or a choice outside its options. */
export function storageValues(body: StorageBodyInput, driver: Driver, nowMs: number): StorageValues {
  if (typeof body.addition !== "string" || parseAddition(body.addition) === null)
    throw new ApiError(400, ADDITION_NOT_AN_OBJECT);
  const template = new Map(commonItems(driver).map((item) => [item.name, item]));
  const flag = (name: string, value: boolean | null | undefined) => value ?? template.get(name)?.default === "true";
  const choice = (name: string, value: string | null | undefined) => {
    const item = template.get(name);
    if (value === undefined || value === null) return item?.default ?? "";
    if (value === "") return item?.required ? item.default : "";
    if (item?.options.split(",").includes(value)) return value;
    const allowed = item ? `one of ${item.options.split(",").join(", ")}${item.required ? "" : " or empty"}` : "empty";
    throw new ApiError(400, choiceNotAllowed(name, allowed, driver.config.name));
  };
  return {
    mountPath: cleanPath(body.mount_path),
    order: body.order ?? 0,
    driver: driver.config.name,
    cacheExpiration: body.cache_expiration ?? Number(template.get("cache_expiration")?.default ?? 0),
    addition: body.addition,
    remark: body.remark ?? "",
    modifiedAtMs: nowMs,
    disableIndex: flag("disable_index", body.disable_index),
    enableSign: flag("enable_sign", body.enable_sign),
    orderBy: choice("order_by", body.order_by),
    orderDirection: choice("order_direction", body.order_direction),
    extractFolder: choice("extract_folder", body.extract_folder),
    webProxy: flag("web_proxy", body.web_proxy),
    webdavPolicy: choice("webdav_policy", body.webdav_policy),
    proxyRange: flag("proxy_range", body.proxy_range),
    downProxyUrl: body.down_proxy_url ?? "",
    downProxySign: flag("down_proxy_sign", body.down_proxy_sign),
  };
}
