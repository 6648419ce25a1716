// Property-based input fuzzing for every route that takes input: a JSON body, a query
// string, or (for the few POSTs that take nothing) a body they must ignore. What a JSON body's
// fields and a query's parameters accept is read from the route's schema (see "Fields from the
// route schemas" and "Query parameters from the route schemas"); the route tables below say how to
// build a request each route must refuse whatever else it holds, and what the schema cannot say.
// fuzz-*.test.ts run the properties group by group; fuzz-coverage.test.ts checks the table against
// the router and the OpenAPI document.
//
// Inputs are invalid by construction: every request is refused by validation, or carries an
// "anchor" that keeps it refused (a taken name, an id that does not exist, a URL that is not
// http), so the database must not change. Where a random input can be valid (an empty update, a
// read), it is only on routes where that is harmless.
//
// FUZZ_SEED=<n> replays a run (a failure prints its seed); FUZZ_RUNS=<x> scales
// every property's number of runs; FUZZ_SLOW_MS (default 2000) is the longest a reply may take.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { getTableColumns, getTableName, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import {
  appPasswords,
  deviceSessions,
  pendingOtpEnrolments,
  roles,
  settings,
  sshPublicKeys,
  storages,
  users,
} from "../../src/db/schema.ts";
import openApiDocument from "../../src/generated/openapi.json";
import { SETTING_DEFINITIONS } from "../../src/db/settings.ts";
import { allDrivers } from "../../src/drivers/index.ts";
import { aListStaticHash, login, postJson } from "./auth.ts";
import { backgroundContext, createUnitFixture, TEST_ADMIN_PASSWORD, testEnv, type UnitFixture } from "./unit.ts";

// ---------------------------------------------------------------------------------------------
// Run parameters

function seedFromEnvironment(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw.trim() === "") return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${raw}`);
  return seed;
}

export const FUZZ_SEED = seedFromEnvironment();
const RUN_SCALE = Math.max(0.01, Number(process.env.FUZZ_RUNS) || 1);
const runs = (n: number) => Math.max(1, Math.round(n * RUN_SCALE));

const MAX_BODY_BYTES = Number(testEnv.MAX_BODY_BYTES);
/**
 * The longest a refusal may take. A Worker has little CPU time per request, and nothing here
 * calls out; the slowest honest case is a 1 MiB body or a PBKDF2 sign-in on a busy machine.
 */
const SLOW_MS = Number(process.env.FUZZ_SLOW_MS) || 2_000;

// ---------------------------------------------------------------------------------------------
// JSON text beyond what JSON.stringify writes: number literals it cannot (2^53+1, -0, 1e309) and
// objects with a key twice.

/** A JSON fragment sent verbatim. */
class Raw {
  constructor(readonly json: string) {}
}

/** An object as key/value pairs, so a key may appear more than once. */
class Entries {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}
}

function toJson(value: unknown): string {
  if (value instanceof Raw) return value.json;
  if (value instanceof Entries) {
    return `{${value.entries
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : toJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") return toJson(new Entries(Object.entries(value)));
  return JSON.stringify(value) ?? "null";
}

// ---------------------------------------------------------------------------------------------
// Value generators

/** Text that breaks naive code: controls, NUL, bidi overrides, lone and reversed surrogates, emoji sequences, injection-looking strings. */
const SPECIAL_TEXT = [
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ufffe",
  "\uffff",
  "\ufffd",
  "\u202e",
  "\u202d",
  "\u200f",
  "\u200e",
  "\u061c",
  "\u2066",
  "مرحبا",
  "שלום",
  "\u0301",
  "e\u0301",
  "ﬃ",
  "İ",
  "ß",
  "Ω",
  "😀",
  "👩‍👩‍👧‍👦",
  "🏳️‍🌈",
  "\ud83d",
  "\ude00",
  "\udc00\ud800",
  "𝕏",
  "\t",
  "\n",
  "\r\n",
  " ",
  "\\",
  '"',
  "'",
  "`",
  "%",
  "%00",
  "%s",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template placeholder is one of the hostile inputs
  "${x}",
  "{{x}}",
  "../",
  "//",
  "<script>",
  "' OR '1'='1",
  "; DROP TABLE users; --",
  "null",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Any text: all code points, grapheme clusters, and the special pieces above mixed together. */
export const unicodeText = (maxLength = 48): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: "binary", maxLength }),
    fc.string({ unit: "grapheme", maxLength }),
    fc
      .array(fc.oneof(fc.constantFrom(...SPECIAL_TEXT), loneSurrogate, fc.string({ unit: "binary", maxLength: 3 })), {
        maxLength: 10,
      })
      .map((parts) => parts.join("")),
  );

/** Number literals at the edges: unsafe integers, -0, overflow to Infinity, underflow, 32/64-bit limits. */
const EDGE_NUMBER_LITERALS = [
  "0",
  "-0",
  "-1",
  "1.5",
  "-1.5",
  "0.1",
  "1.0",
  "1e308",
  "-1e308",
  "1e309",
  "-1e309",
  "1E400",
  "5e-324",
  "-5e-324",
  "1e-400",
  "9007199254740991",
  "9007199254740992",
  "9007199254740993",
  "-9007199254740993",
  "18446744073709551616",
  "65535",
  "65536",
  "-65536",
  "2147483647",
  "2147483648",
  "4294967296",
  "1e21",
  "100000000000000000000000",
];
/** Strings that look like numbers to someone. */
const NUMERIC_STRINGS = [
  "NaN",
  "Infinity",
  "-Infinity",
  "1e3",
  "0x10",
  "0b1",
  "0o7",
  "1_000",
  " 1",
  "1 ",
  "+1",
  "1.",
  ".5",
  "١٢٣",
  "１２３",
  "",
  "-",
  "00",
  "007",
  "0",
  "-0",
  "-1",
  "1e309",
  "9007199254740993",
  "99999999999999999999",
];

const rawNumber = fc.constantFrom(...EDGE_NUMBER_LITERALS).map((json) => new Raw(json));
const edgeNumber: fc.Arbitrary<unknown> = fc.oneof(
  rawNumber,
  fc.constantFrom(...NUMERIC_STRINGS),
  fc.double(),
  fc.integer(),
);

const finiteNumber = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
const smallJson = fc.jsonValue({ maxDepth: 2 });
const anyArray = fc.array(smallJson, { maxLength: 4 });
const anyObject = fc.dictionary(fc.string({ maxLength: 6 }), smallJson, { maxKeys: 4 });

type Kind = "string" | "number" | "boolean" | "array" | "object";

/** Values of any type but `kind`; null too unless the field takes null. */
function wrongType(kind: Kind, nullable: boolean): fc.Arbitrary<unknown> {
  const others: Record<Kind, fc.Arbitrary<unknown>[]> = {
    string: [finiteNumber, rawNumber, fc.boolean(), anyArray, anyObject],
    number: [unicodeText(12), fc.constantFrom(...NUMERIC_STRINGS), fc.boolean(), anyArray, anyObject],
    boolean: [
      fc.constantFrom("true", "false", "1", "0", "yes", ""),
      fc.constantFrom(0, 1),
      finiteNumber,
      anyArray,
      anyObject,
    ],
    array: [unicodeText(12), finiteNumber, fc.boolean(), anyObject],
    object: [unicodeText(12), finiteNumber, fc.boolean(), anyArray],
  };
  return fc.oneof(...others[kind], ...(nullable ? [] : [fc.constant(null)]));
}

const tooLong = (max: number) => fc.integer({ min: max + 1, max: max + 40 }).map((n) => "x".repeat(n));

// ---------------------------------------------------------------------------------------------
// Fields: what a request schema field refuses, and what it may hold

interface Field {
  kind: Kind | "unknown";
  required: boolean;
  /** Values the route refuses for this field alone (wrong type, out of range, not an allowed value); null when every value is accepted. */
  invalid: fc.Arbitrary<unknown> | null;
  /** Values of the right type and any content; some are valid. */
  free: fc.Arbitrary<unknown>;
}

interface FieldOptions {
  required?: boolean;
  nullable?: boolean;
  /** Replaces the default free values. */
  free?: fc.Arbitrary<unknown>;
  /** More values the route refuses, beyond the type and range checks. */
  invalid?: fc.Arbitrary<unknown>;
}

function text(options: FieldOptions & { max?: number; min?: number; trim?: boolean }): Field {
  const { max, min = 0, trim = false, nullable = false } = options;
  const empty = min > 0 ? [fc.constant(""), ...(trim ? [fc.constantFrom(" ", "\t\n", "\u00a0 \u2028")] : [])] : [];
  return {
    kind: "string",
    required: options.required ?? false,
    invalid: fc.oneof(
      wrongType("string", nullable),
      ...(max === undefined ? [] : [tooLong(max)]),
      ...empty,
      ...(options.invalid ? [options.invalid] : []),
    ),
    free: options.free ?? unicodeText(max === undefined ? 64 : Math.min(max + 8, 300)),
  };
}

function integer(options: FieldOptions & { min: number; max: number }): Field {
  const { min, max, nullable = false } = options;
  const below =
    min > Number.MIN_SAFE_INTEGER
      ? [fc.integer({ min: Math.max(min - 1_000_000, Number.MIN_SAFE_INTEGER), max: min - 1 })]
      : [];
  const above =
    max < Number.MAX_SAFE_INTEGER
      ? [fc.integer({ min: max + 1, max: Math.min(max + 1_000_000, Number.MAX_SAFE_INTEGER) })]
      : [];
  const unsafe = [
    "9007199254740993",
    "-9007199254740993",
    "1e308",
    "-1e308",
    "1e309",
    "-1e309",
    ...(min > 0 ? ["0", "-0"] : []),
  ];
  return {
    kind: "number",
    required: options.required ?? false,
    invalid: fc.oneof(
      wrongType("number", nullable),
      fc.double({ min: -1e6, max: 1e6, noInteger: true, noNaN: true }),
      fc.constantFrom(...unsafe).map((json) => new Raw(json)),
      ...below,
      ...above,
    ),
    free: options.free ?? fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max)),
  };
}

function number(options: FieldOptions): Field {
  return {
    kind: "number",
    required: options.required ?? false,
    invalid: fc.oneof(
      wrongType("number", options.nullable ?? false),
      fc.constantFrom("1e309", "-1e309").map((json) => new Raw(json)),
    ),
    free: fc.oneof(
      finiteNumber,
      rawNumber.filter((raw) => Number.isFinite(Number(raw.json))),
    ),
  };
}

function boolean(options: FieldOptions = {}): Field {
  return {
    kind: "boolean",
    required: options.required ?? false,
    invalid: wrongType("boolean", options.nullable ?? false),
    free: fc.boolean(),
  };
}

function list(item: Field, options: FieldOptions & { max: number; example: unknown }): Field {
  const withBadItem = item.invalid
    ? [fc.tuple(fc.array(item.free, { maxLength: 2 }), item.invalid).map(([good, bad]) => [...good, bad])]
    : [];
  return {
    kind: "array",
    required: options.required ?? false,
    invalid: fc.oneof(
      wrongType("array", options.nullable ?? false),
      fc.constant(Array.from({ length: options.max + 1 }, () => options.example)),
      ...withBadItem,
    ),
    free: options.free ?? fc.array(item.free, { maxLength: 4 }),
  };
}

function record(fields: Record<string, Field>): Field {
  const names = Object.keys(fields);
  const free = fc.record(Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, field.free])));
  const oneBad = fc
    .constantFrom(...names.filter((name) => fields[name]!.invalid))
    .chain((name) => fc.tuple(free, fc.constant(name), fields[name]!.invalid!))
    .map(([values, name, bad]) => ({ ...values, [name]: bad }));
  const oneMissing = fc
    .constantFrom(...names.filter((name) => fields[name]!.required))
    .chain((name) => free.map((values) => Object.fromEntries(Object.entries(values).filter(([key]) => key !== name))));
  return { kind: "object", required: false, invalid: fc.oneof(wrongType("object", false), oneBad, oneMissing), free };
}

// ---------------------------------------------------------------------------------------------
// Fields from the route schemas. Each route's request body is described once, by the zod schema
// it validates with; the OpenAPI document generated from those schemas carries every field's type,
// length and range limits, required-ness and allowed values. The generators read them from there,
// so a limit changed in a route is fuzzed at its new value. What a schema cannot say (text that is
// trimmed, values the handler refuses, values that must stay harmless) is a hint below.

/** A JSON Schema node, as far as the request bodies and query parameters use it. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  anyOf?: Schema[];
  enum?: unknown[];
  example?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
}

/** What a field's schema leaves out: the trimming zod does before its length checks, and values of the route's own. */
interface Hint {
  /** The schema trims before checking `minLength`: whitespace alone is empty. */
  trim?: boolean;
  free?: fc.Arbitrary<unknown>;
  invalid?: fc.Arbitrary<unknown>;
}

/** The OpenAPI document GET /api/openapi.json serves (built from the route schemas by scripts/openapi.ts). */
// The imported JSON, typed as far as the fuzzer reads it.
const DOCUMENT = openApiDocument as unknown as {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; schema: Schema }[];
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, Schema> };
};

const resolveSchema = (schema: Schema): Schema =>
  schema.$ref ? resolveSchema(DOCUMENT.components!.schemas![schema.$ref.split("/").pop()!]!) : schema;

/** The schema's one type besides null, and whether null is allowed. */
function typeOf(schema: Schema): { type: string | undefined; nullable: boolean } {
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  const nonNull = types.filter((type) => type !== "null");
  return { type: nonNull.length === 1 ? nonNull[0] : undefined, nullable: types.includes("null") };
}

/** A value of the right type that a list can be filled with past its limit. */
function exampleOf(schema: Schema): unknown {
  const { type } = typeOf(schema);
  if (type === "string") return schema.enum?.[0] ?? "a";
  if (type === "integer" || type === "number") return schema.minimum ?? (schema.exclusiveMinimum ?? 0) + 1;
  if (type === "boolean") return false;
  if (type === "object")
    return Object.fromEntries((schema.required ?? []).map((name) => [name, exampleOf(schema.properties![name]!)]));
  return null;
}

/** Strings outside an enum: near misses (case, blanks) and anything else. */
function enumText(values: string[], required: boolean, nullable: boolean): Field {
  const nearMisses = values.flatMap((value) => [value.toUpperCase(), ` ${value}`, `${value}x`]);
  return {
    kind: "string",
    required,
    invalid: fc.oneof(
      wrongType("string", nullable),
      fc.constantFrom("", ...nearMisses),
      unicodeText(12).filter((s) => !values.includes(s)),
    ),
    free: fc.constantFrom(...values),
  };
}

function fieldFromSchema(node: Schema, required: boolean, hint: Hint, where: string): Field {
  const schema = resolveSchema(node);
  const { type, nullable } = typeOf(schema);
  const options = {
    required,
    nullable,
    ...(hint.free ? { free: hint.free } : {}),
    ...(hint.invalid ? { invalid: hint.invalid } : {}),
  };
  switch (type) {
    case "string":
      if (schema.enum) return enumText(schema.enum as string[], options.required, nullable);
      return text({
        ...options,
        trim: hint.trim ?? false,
        ...(schema.maxLength === undefined ? {} : { max: schema.maxLength }),
        ...(schema.minLength === undefined ? {} : { min: schema.minLength }),
      });
    case "integer":
      return integer({
        ...options,
        min:
          schema.minimum ??
          (schema.exclusiveMinimum === undefined ? Number.MIN_SAFE_INTEGER : schema.exclusiveMinimum + 1),
        max: schema.maximum ?? Number.MAX_SAFE_INTEGER,
      });
    case "number":
      return number(options);
    case "boolean":
      return boolean(options);
    case "array":
      if (schema.maxItems === undefined)
        throw new Error(`${where}: a list without maxItems; the fuzz table expects every list to be bounded`);
      return list(fieldFromSchema(schema.items!, false, {}, `${where}[]`), {
        ...options,
        max: schema.maxItems,
        example: exampleOf(resolveSchema(schema.items!)),
      });
    case "object":
      return record(objectFields(schema, {}, where));
    default:
      // No type: any JSON value is accepted (fs/other's `data`).
      if (
        schema.anyOf === undefined &&
        Object.keys(schema).every((key) => key === "description" || key === "example")
      ) {
        return { kind: "unknown", required: options.required, invalid: null, free: smallJson };
      }
      throw new Error(
        `${where}: no generator for this schema (${JSON.stringify(schema)}); give the field in full in the route's hints`,
      );
  }
}

/** The fields of an object schema; a hint that is a whole Field replaces its field's derivation. */
function objectFields(schema: Schema, hints: Record<string, Hint | Field>, where: string): Record<string, Field> {
  const properties = schema.properties ?? {};
  for (const name of Object.keys(hints))
    if (!Object.hasOwn(properties, name))
      throw new Error(`${where}: a hint for "${name}", which the schema does not have`);
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => {
      const hint = hints[name] ?? {};
      return [
        name,
        "kind" in hint
          ? hint
          : fieldFromSchema(property, (schema.required ?? []).includes(name), hint, `${where}.${name}`),
      ];
    }),
  );
}

/** The JSON body of a POST route as the router validates it: its fields, or those of its items when it is an array. */
function bodySchema(path: string): { object: Schema; isArray: boolean } {
  const body = DOCUMENT.paths[path]?.post?.requestBody?.content["application/json"]?.schema;
  if (!body) throw new Error(`POST ${path} takes no JSON body in the OpenAPI document`);
  const schema = resolveSchema(body);
  return typeOf(schema).type === "array"
    ? { object: resolveSchema(schema.items!), isArray: true }
    : { object: schema, isArray: false };
}

/**
 * A route's fields, from its schema, and whether a body naming none of them is valid: no field
 * is required (or the body is an array, which may be empty).
 */
function fromSchema(
  path: string,
  hints: Record<string, Hint | Field> = {},
): Pick<JsonRoute, "fields" | "emptyIsValid"> {
  const { object, isArray } = bodySchema(path);
  return {
    fields: objectFields(object, hints, `POST ${path}`),
    emptyIsValid: isArray || (object.required ?? []).length === 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Query parameters from the route schemas, likewise: each route's query schema names its
// parameters and their types in the OpenAPI document. An integer is an id (a row to find), or a
// page number when it is `page` or `per_page`; a string is text, fuzzed also at its declared
// length limits, with values matching its pattern, and with its example. What the schema cannot
// say (values the route knows: a setting key, a driver name) is a hint.

/** How a query parameter's values are made: an id, a page number, or text. */
type QueryKind = "id" | "page" | "text";

interface QueryParam {
  kind: QueryKind;
  /** Values the route knows, beside the random ones: the hint's words and the schema's example. */
  words?: readonly string[];
  /** Text: the schema's length limits and pattern. */
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** What a query parameter's schema leaves out: values the route knows. */
interface QueryHint {
  words?: readonly string[];
}

/** The integer parameters that page a list rather than name a row. */
const PAGE_PARAMETERS = ["page", "per_page"];

function queryParam(name: string, node: Schema, hint: QueryHint, where: string): QueryParam {
  const schema = resolveSchema(node);
  const { type } = typeOf(schema);
  const words = hint.words ?? [];
  switch (type) {
    case "integer":
      return { kind: PAGE_PARAMETERS.includes(name) ? "page" : "id", ...(words.length > 0 ? { words } : {}) };
    case "string": {
      const known = [
        ...words,
        ...((schema.enum ?? []) as string[]),
        ...(typeof schema.example === "string" ? [schema.example] : []),
      ];
      return {
        kind: "text",
        ...(known.length > 0 ? { words: [...new Set(known)] } : {}),
        ...(schema.minLength === undefined ? {} : { minLength: schema.minLength }),
        ...(schema.maxLength === undefined ? {} : { maxLength: schema.maxLength }),
        ...(schema.pattern === undefined ? {} : { pattern: schema.pattern }),
      };
    }
    default:
      throw new Error(`${where}: no generator for a query parameter of this schema (${JSON.stringify(schema)})`);
  }
}

/** A query row as written below: the route's parameters come from its schema, with hints for what it cannot say. */
export type QueryRow = Omit<QueryRoute, "params"> & { hints?: Record<string, QueryHint> };

/** A query row with its parameters read from the OpenAPI document; a hint or refused id naming a parameter the route does not have throws. */
export function queryRoute(row: QueryRow): QueryRoute {
  const { hints = {}, ...route } = row;
  const where = `${row.method} ${row.path}`;
  const parameters = (DOCUMENT.paths[row.path]?.[row.method.toLowerCase()]?.parameters ?? []).filter(
    (parameter) => parameter.in === "query",
  );
  if (parameters.length === 0) throw new Error(`${where} takes no query parameters in the OpenAPI document`);
  const names = parameters.map((parameter) => parameter.name);
  for (const name of Object.keys(hints))
    if (!names.includes(name)) throw new Error(`${where}: a hint for "${name}", which the schema does not have`);
  for (const name of Object.keys(row.refusedIds ?? {}))
    if (!names.includes(name)) throw new Error(`${where}: refused ids for "${name}", which the schema does not have`);
  const params = Object.fromEntries(
    parameters.map((parameter) => [
      parameter.name,
      queryParam(parameter.name, parameter.schema, hints[parameter.name] ?? {}, `${where} ?${parameter.name}`),
    ]),
  );
  return { ...route, params };
}

// ---------------------------------------------------------------------------------------------
// The fixture every group starts from

type Caller = "admin" | "user" | "anonymous";

export const FUZZ_USER = "fuzzer";
/** A mount path that is taken: creating a storage there is refused. */
export const EXISTING_MOUNT = "/fuzz-existing";
/** The title of the fuzz user's one SSH key: adding another with it is refused. */
const EXISTING_KEY_TITLE = "fuzz-existing";
/** An id no row has. */
export const MISSING_ID = 99_999;
/** The accounts the seed makes and startFuzzing adds, by username, in id order; checked at start. */
const USER_IDS = { guest: 1, admin: 2, [FUZZ_USER]: 3 } as const;
/** The seeded roles. */
const ROLE_IDS = { guest: 1, admin: 2 } as const;

export interface FuzzContext {
  fixture: UnitFixture;
  tokens: Record<Caller, string>;
}

async function startFuzzing(): Promise<FuzzContext> {
  const fixture = await createUnitFixture();
  const admin = (await login(fixture, { username: "admin", password: TEST_ADMIN_PASSWORD })).data!.token;
  // Nobody's password can be guessed by the generators: a random UUID.
  const password = randomUUID();
  await postJson(fixture, "/api/admin/user/create", { username: FUZZ_USER, password }, { Authorization: admin });
  const user = (await login(fixture, { username: FUZZ_USER, password })).data!.token;
  await fixture.db
    .insert(storages)
    .values({ mountPath: EXISTING_MOUNT, driver: "Virtual", status: "work", modifiedAtMs: Date.now() });
  await fixture.db.insert(sshPublicKeys).values({
    userId: USER_IDS[FUZZ_USER],
    title: EXISTING_KEY_TITLE,
    fingerprint: "SHA256:fuzz",
    keyText: VALID_SSH_KEY,
    addedAt: 0,
    lastUsedAt: 0,
  });
  await fixture.db.insert(appPasswords).values({
    userId: USER_IDS[FUZZ_USER],
    name: EXISTING_KEY_TITLE,
    hash: "0".repeat(64),
    createdAt: 0,
    passwordChangedAt: 0,
  });
  await fixture.db.run(
    sql`UPDATE app_passwords SET pwd_ts = (SELECT pwd_ts FROM users WHERE id = ${USER_IDS[FUZZ_USER]})`,
  );
  // Preconditions the anchors rely on: the account ids, no deprecated setting a random key could
  // delete, no 2FA enrolment a random code could complete.
  const accounts = await fixture.db.select({ id: users.id, username: users.username }).from(users).orderBy(users.id);
  const expected = Object.entries(USER_IDS).map(([username, id]) => ({ id, username }));
  if (JSON.stringify(accounts) !== JSON.stringify(expected))
    throw new Error(`unexpected accounts ${JSON.stringify(accounts)}`);
  const state = await snapshot(fixture.db);
  if (JSON.parse(state.get("settings")!).some((row: unknown[]) => row[6] === 3))
    throw new Error("a deprecated setting exists");
  if (state.get("pending_otp_enrolments") !== "[]") throw new Error("a 2FA enrolment is pending");
  return { fixture, tokens: { admin, user, anonymous: "" } };
}

/** A real ed25519 public key line, so a request with it gets past the key check to the title check. */
const VALID_SSH_KEY = (() => {
  const raw = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(raw)]).toString("base64")} fuzz@gatehouse`;
})();

// ---------------------------------------------------------------------------------------------
// The database, watched: every table a request could write, except what requests legitimately
// touch: login_failures (each refused sign-in counts) and device_sessions.last_active (the
// guard's once-a-second touch).

const WATCHED: { table: SQLiteTable; ignore?: string[] }[] = [
  { table: users },
  { table: roles },
  { table: settings },
  { table: storages },
  { table: sshPublicKeys },
  { table: deviceSessions, ignore: ["last_active"] },
  { table: pendingOtpEnrolments },
];

const SNAPSHOT_SQL = WATCHED.map(({ table, ignore = [] }) => {
  const name = getTableName(table);
  const columns = Object.values(getTableColumns(table))
    .map((column) => column.name)
    .filter((column) => !ignore.includes(column))
    .map((column) => `"${column}"`);
  return `SELECT '${name}' AS name, (SELECT json_group_array(json_array(${columns.join(", ")})) FROM (SELECT * FROM "${name}" ORDER BY rowid)) AS rows`;
}).join(" UNION ALL ");

/** Every watched table as JSON text, by table name. */
export async function snapshot(db: Database): Promise<Map<string, string>> {
  const rows = await db.all<{ name: string; rows: string }>(sql.raw(SNAPSHOT_SQL));
  return new Map(rows.map((row) => [row.name, row.rows]));
}

function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...before.keys()].filter((name) => before.get(name) !== after.get(name));
}

// ---------------------------------------------------------------------------------------------
// Requests and what every reply must look like

interface FuzzRequest {
  method: string;
  path: string;
  caller: Caller;
  /** null: no Content-Type header. */
  contentType?: string | null;
  body?: string | Uint8Array;
  /** Send the body as a stream, without Content-Length. */
  chunked?: boolean;
  headers?: Record<string, string>;
}

async function send(context: FuzzContext, request: FuzzRequest): Promise<Response> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.caller !== "anonymous") headers.Authorization = context.tokens[request.caller];
  if (request.contentType) headers["Content-Type"] = request.contentType;
  let body: BodyInit | undefined = request.body;
  if (request.chunked && request.body !== undefined) {
    const bytes = typeof request.body === "string" ? new TextEncoder().encode(request.body) : request.body;
    body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 65_536) controller.enqueue(bytes.subarray(i, i + 65_536));
        controller.close();
      },
    });
  }
  // Background work (load_all's re-checks) is awaited, so it cannot outlive its case.
  const { ctx, pending } = backgroundContext();
  const init = { method: request.method, headers, body, ...(request.chunked ? { duplex: "half" } : {}) } as RequestInit;
  const response = await context.fixture.app.request(request.path, init, testEnv, ctx);
  await Promise.allSettled(pending);
  return response;
}

function describeRequest(request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ""
      : typeof request.body === "string"
        ? request.body
        : new TextDecoder().decode(request.body);
  const shown = body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
  return `${request.method} ${request.path.slice(0, 300)} as ${request.caller}, Content-Type ${JSON.stringify(request.contentType ?? null)}${request.chunked ? ", chunked" : ""}, body ${JSON.stringify(shown)}`;
}

/** A stack trace or a source location in a message. */
const STACK_TRACE = [
  /\n\s*at\s/,
  /\bat\s+\S+\s+\(\S+:\d+:\d+\)/,
  /(file:\/\/|\/)\S+\.(ts|js|mjs|cjs):\d+/,
  /node_modules/,
  /^\w*Error: /,
  /\b\w+Error: .*\n/,
];

/**
 * The property every reply holds: HTTP 200, a JSON envelope `{code, message, data}` with one of
 * `answers` as code, a message that is words (no stack trace), data null on failure, no secret.
 */
async function expectEnvelope(response: Response, answers: readonly number[], request: FuzzRequest): Promise<void> {
  const where = describeRequest(request);
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`HTTP ${response.status} (expected 200) for ${where}: ${text.slice(0, 300)}`);
  if (text === "") throw new Error(`empty body for ${where}`);
  let reply: { code?: unknown; message?: unknown; data?: unknown };
  try {
    reply = JSON.parse(text);
  } catch {
    throw new Error(`reply is not JSON for ${where}: ${text.slice(0, 300)}`);
  }
  if (reply === null || typeof reply !== "object" || Object.keys(reply).sort().join(",") !== "code,data,message") {
    throw new Error(`reply is not an envelope for ${where}: ${text.slice(0, 300)}`);
  }
  const { code, message, data } = reply;
  if (typeof code !== "number" || !answers.includes(code)) {
    throw new Error(
      `code ${String(code)} "${String(message).slice(0, 300)}" (expected ${answers.join(" or ")}) for ${where}`,
    );
  }
  if (typeof message !== "string" || message.trim() === "") throw new Error(`empty message for ${where}`);
  if (STACK_TRACE.some((pattern) => pattern.test(message)))
    throw new Error(`stack trace in message "${message.slice(0, 500)}" for ${where}`);
  if (code !== 200 && data !== null)
    throw new Error(`failure with data ${JSON.stringify(data).slice(0, 200)} for ${where}`);
  if (text.includes(testEnv.JWT_SECRET!) || text.includes("pbkdf2-sha256$"))
    throw new Error(`a secret in the reply for ${where}`);
}

interface Case {
  request: FuzzRequest;
  answers: readonly number[];
}

/**
 * Runs one property: for every generated input, the reply holds expectEnvelope, and afterwards
 * the watched tables are as they were before the case (after `restore`, where a valid request
 * had to be allowed).
 */
async function checkProperty<T>(
  context: FuzzContext,
  inputs: fc.Arbitrary<T>,
  toCase: (input: T) => Case,
  numRuns: number,
  restore?: () => Promise<void>,
): Promise<void> {
  const db = context.fixture.db;
  let state = await snapshot(db);
  const property = fc.asyncProperty(inputs, async (input) => {
    const { request, answers } = toCase(input);
    const started = performance.now();
    const response = await send(context, request);
    const elapsed = performance.now() - started;
    await expectEnvelope(response, answers, request);
    if (elapsed > SLOW_MS)
      throw new Error(`${Math.round(elapsed)} ms (more than ${SLOW_MS}) for ${describeRequest(request)}`);
    await restore?.();
    const now = await snapshot(db);
    const changed = changedTables(state, now);
    state = now;
    if (changed.length > 0)
      throw new Error(`the database changed (${changed.join(", ")}) after ${describeRequest(request)}`);
  });
  // No shrinking: the database and the clock make later runs of a shrink unlike the failing one.
  const details = await fc.check(property, { seed: FUZZ_SEED, numRuns: runs(numRuns), endOnFailure: true });
  if (!details.failed) return;
  // fast-check's own report prints the whole counterexample, which may be a megabyte.
  const counterexample = details.counterexample === null ? "none" : fc.stringify(details.counterexample);
  const cause =
    details.errorInstance instanceof Error
      ? details.errorInstance.message
      : String(details.errorInstance ?? "interrupted");
  throw new Error(
    `Property failed after ${details.numRuns} cases; replay with FUZZ_SEED=${FUZZ_SEED}\n` +
      `Counterexample: ${counterexample.length > 2_000 ? `${counterexample.slice(0, 2_000)}… (${counterexample.length} chars)` : counterexample}\n` +
      `Failure: ${cause}`,
  );
}

// ---------------------------------------------------------------------------------------------
// The route table

export type Group =
  | "auth-me"
  | "sessions-sshkeys"
  | "storages-drivers"
  | "settings"
  | "users-roles"
  | "fs-metas"
  | "tasks";

/** A body of the right shape the route refuses, and the fields (`anchor`) that keep it refused. */
interface Variant {
  body: Record<string, unknown>;
  /** Fields that only ever get this value or an invalid one; every other field may hold anything. */
  anchor: string[];
}

export interface JsonRoute {
  path: string;
  group: Group;
  caller: Caller;
  /** Every field of the request schema. */
  fields: Record<string, Field>;
  variants: Variant[];
  /** The body is an array of such objects (settings/save); `wrap` turns one into a refused array. */
  wrap?: (item: unknown, choice: number) => unknown;
  /** Every field is optional: a body naming none of them is valid, and changes nothing. */
  emptyIsValid?: boolean;
  /** Headers each request gets (sign-ins: a fresh client address, so lockout never answers). */
  headers?: () => Record<string, string>;
  /** Codes the route answers a refused body besides 400 and 404 (the file routes: 403 for a climbing path). */
  alsoRefused?: number[];
  /** Codes the route answers a valid body besides 200 (the file routes: nothing mounted, no scope). */
  alsoValid?: number[];
}

export interface QueryRoute {
  method: "GET" | "POST";
  path: string;
  /** The URL to call when `path` is a pattern (`/api/task/{kind}/info`). */
  url?: string;
  group: Group;
  caller: Caller;
  /** Read from the route's schema (see queryRoute). */
  params: Record<string, QueryParam>;
  /** The codes a random query may get: reads may succeed; a write must be refused. */
  answers: readonly number[];
  /**
   * Query parameters whose small positive values could name a real row: never generated, except
   * the listed ones the route refuses anyway (the admin and the guest cannot be deleted).
   */
  refusedIds?: Record<string, readonly string[]>;
  /** A JSON body sent along (sign-in: wrong credentials). */
  jsonBody?: unknown;
  headers?: () => Record<string, string>;
}

/** A POST that takes no input: whatever body it gets is ignored. `keep` saves the state a call changes and returns its restorer. */
export interface BodylessRoute {
  path: string;
  /** The URL to call when `path` is a pattern. */
  url?: string;
  /** What any body gets; 200 unless told (a route that reads a body of its own kind: 400 too). */
  answers?: readonly number[];
  group: Group;
  caller: Caller;
  keep: (db: Database) => Promise<() => Promise<void>>;
}

let clientAddress = 0;
/** A sign-in from an address with a clean record: lockout (429) never applies. */
const freshAddress = () => {
  clientAddress += 1;
  return {
    "CF-Connecting-IP": `10.${(clientAddress >> 16) & 255}.${(clientAddress >> 8) & 255}.${clientAddress & 255}`,
  };
};

const KNOWN_PASSWORDS = new Set([TEST_ADMIN_PASSWORD, aListStaticHash(TEST_ADMIN_PASSWORD)]);
// Nobody's password: the fuzz user's is a random UUID, the admin's is excluded.
const signInHints = { password: { free: unicodeText(64).filter((p) => !KNOWN_PASSWORDS.has(p)) } };
const wrongCredentials = { username: "fuzz-nobody", password: "not the password" };

// Session ids are 32 hex digits; the free ids never are.
const sessionIdHints = { session_id: { free: unicodeText(64).filter((id) => !/^[0-9a-f]{32}$/.test(id)) } };

const KEY_TYPES = [
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
  "ssh-ed25519-cert-v01@openssh.com",
];
/** A real key line, damaged: cut, bytes changed, type swapped, options in front, random blobs after a real type. */
const mangledKey: fc.Arbitrary<string> = fc.oneof(
  fc.nat(VALID_SSH_KEY.length).map((n) => VALID_SSH_KEY.slice(0, n)),
  fc
    .tuple(fc.nat(VALID_SSH_KEY.length - 1), fc.constantFrom(..."A/+=0aZ \n\u0000é"))
    .map(([at, c]) => VALID_SSH_KEY.slice(0, at) + c + VALID_SSH_KEY.slice(at + 1)),
  fc.constantFrom(...KEY_TYPES).map((type) => `${type} ${VALID_SSH_KEY.split(" ")[1]}`),
  fc
    .tuple(
      fc.constantFrom('command="echo hi" ', 'from="*.x",no-pty ', '"unterminated ', 'environment="A=\\"b" '),
      fc.boolean(),
    )
    .map(([options, real]) => options + (real ? VALID_SSH_KEY : "ssh-ed25519 AAAA")),
  fc.tuple(fc.constantFrom(...KEY_TYPES), fc.uint8Array({ maxLength: 600 })).map(([type, bytes]) => {
    const name = Buffer.from(type);
    return `${type} ${Buffer.concat([Buffer.from([0, 0, 0, name.length]), name, bytes]).toString("base64")}`;
  }),
);

const SETTING_KEYS = SETTING_DEFINITIONS.map((definition) => definition.key);
const UNKNOWN_SETTING = { key: "fuzz_unknown_key", value: "" };

const JWT_PART = fc.string({ unit: fc.constantFrom(..."abcXYZ019-_"), minLength: 5, maxLength: 60 });
/** Permanent tokens set_token refuses: too short, too long, not printable ASCII, with spaces, shaped like a JWT. */
const refusedToken = fc.oneof(
  fc.string({ maxLength: 15 }),
  unicodeText(40).map((s) => `fuzz-token-${s}é`),
  fc
    .tuple(
      fc.string({ unit: "grapheme-ascii", minLength: 8, maxLength: 20 }),
      fc.string({ unit: "grapheme-ascii", minLength: 8, maxLength: 20 }),
    )
    .map(([a, b]) => `${a.trim() || "a"} \t${b.trim() || "b"}`),
  fc.tuple(JWT_PART, JWT_PART, JWT_PART).map((parts) => parts.join(".")),
  fc.integer({ min: 513, max: 600 }).map((n) => "t".repeat(n)),
);

/** Is `raw` a URL the service checks would fetch (http or https; for aria2, without credentials)? */
function fetchableUrl(raw: string, credentialsAllowed: boolean): boolean {
  try {
    const url = new URL(raw.trim());
    return (
      (url.protocol === "http:" || url.protocol === "https:") &&
      (credentialsAllowed || (url.username === "" && url.password === ""))
    );
  } catch {
    return false;
  }
}

const NOT_HTTP = [
  "ws://127.0.0.1:1/jsonrpc",
  "wss://127.0.0.1:1/jsonrpc",
  "ftp://127.0.0.1:1/",
  "javascript:alert(1)",
  "file:///etc/passwd",
  "data:text/plain,x",
  "127.0.0.1:6800/jsonrpc",
  "localhost:6800",
  "http://",
  "//127.0.0.1:1/",
  "",
];
const unfetchableUrl = (credentialsAllowed: boolean) =>
  fc
    .oneof(fc.constantFrom(...NOT_HTTP, "http://user:pass@127.0.0.1:1/jsonrpc"), unicodeText(40))
    .filter((url) => !fetchableUrl(url, credentialsAllowed));

/** Ids of rows that exist (the seeded accounts and roles, the fuzz user), and one that does not. */
const rowIds = { free: fc.constantFrom(1, 2, 3) };
const userHints = {
  username: { trim: true },
  role: { free: fc.array(fc.constantFrom(1, 2, 3, MISSING_ID), { maxLength: 3 }) },
};
const roleHints = { name: { trim: true } };

/** An integer as a JSON number or a numeric string, as storage bodies take `order` and `cache_expiration`. */
function integerLike(options: { min?: number } = {}): Field {
  const negative = options.min === 0 ? [fc.constantFrom(-1, "-1", -65536)] : [];
  return {
    kind: "number",
    required: false,
    invalid: fc.oneof(
      fc.constantFrom(1.5, "1.5", "abc", "", " 1", "1e3", "0x10", "1234567890123456", true, false, [], {}, [1]),
      fc.constantFrom("1e308", "9007199254740993", "1e309").map((json) => new Raw(json)),
      ...negative,
    ),
    free: fc.oneof(
      fc.integer({ min: options.min ?? -1_000_000, max: 1_000_000 }),
      fc.integer({ min: 0, max: 99_999 }).map(String),
    ),
  };
}

/** Choices of the storage form: mostly one a template offers (so requests get past them), now and then anything. */
const TEMPLATE_OPTIONS = [
  "",
  "302_redirect",
  "use_proxy_url",
  "native_proxy",
  "name",
  "size",
  "modified",
  "asc",
  "desc",
  "front",
  "back",
];
const storageChoice = {
  invalid: fc.constant("fuzz-no-such-option"),
  free: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(null, ...TEMPLATE_OPTIONS) },
    { weight: 1, arbitrary: unicodeText(20) },
  ),
};
const DRIVERS = ["Alias", "Crypt", "FTP", "Local", "S3", "SFTP", "SMB", "UrlTree", "Virtual", "WebDav"];
const isJsonObjectText = (s: string) => {
  try {
    const value = JSON.parse(s);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
};
/** Paths Alias and Crypt point into: very deep, very many, or odd. */
const pointedPaths = fc.oneof(
  fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.constantFrom(20_000, 60_000)).map((n) => "/a".repeat(n)),
  fc
    .oneof(fc.integer({ min: 1, max: 50_000 }), fc.constantFrom(33_000, 50_000))
    .map((n) => Array.from({ length: n }, (_, i) => `/p${i}`).join("\n")),
  fc
    .array(fc.oneof(unicodeText(16), fc.constantFrom("/", "..", "//", "name:/x", ":", "\\a\\b")), { maxLength: 6 })
    .map((lines) => lines.join("\n")),
);
/** An addition with the items drivers read (Alias paths, Crypt remote_path, addresses, roots), holding anything. */
const driverAddition = fc
  .record({
    paths: pointedPaths,
    remote_path: pointedPaths,
    other: fc.dictionary(
      fc.constantFrom(...new Set(allDrivers().flatMap((driver) => driver.additional.map((item) => item.name)))),
      fc.oneof(unicodeText(16), smallJson),
      { maxKeys: 5 },
    ),
  })
  .map(({ paths, remote_path, other }) => JSON.stringify({ ...other, paths, remote_path }));

/**
 * The storage body: its text limits and flags come from the schema; `id`, `order`,
 * `cache_expiration`, `addition` and `enable_sign` take several types (or are checked by the
 * handler), so they are given whole.
 */
const storageHints = (idField: Field): Record<string, Hint | Field> => ({
  id: idField,
  order: integerLike(),
  driver: {
    free: fc.oneof(fc.constantFrom(...DRIVERS), unicodeText(20)),
    invalid: fc.constantFrom("virtual", "NoSuchDriver", "Virtual "),
  },
  cache_expiration: integerLike({ min: 0 }),
  webdav_policy: storageChoice,
  order_by: storageChoice,
  order_direction: storageChoice,
  extract_folder: storageChoice,
  addition: {
    kind: "unknown",
    required: true,
    invalid: fc.oneof(
      fc.constantFrom(null, 1, true, {}, [], "", "[]", "1", "null", "{", '"{}"', "{'a':1}"),
      unicodeText(20).filter((s) => !isJsonObjectText(s)),
    ),
    free: fc.oneof(
      fc.dictionary(unicodeText(8), smallJson, { maxKeys: 4 }).map((o) => JSON.stringify(o)),
      unicodeText(20),
      driverAddition,
      driverAddition,
    ),
  } satisfies Field,
  enable_sign: {
    kind: "boolean",
    required: false,
    invalid: fc.constantFrom("yes", "TRUE", "1", 1, 0, "", [], {}),
    free: fc.oneof(fc.boolean(), fc.constantFrom("true", "false")),
  } satisfies Field,
});

/**
 * The file routes: a climbing path is refused (403) whatever the other fields hold; a valid read
 * finds nothing mounted (500) or a caller without a scope holding the path (403).
 */
const FS_WRITE = {
  variants: [{ body: { path: "/../fuzz" }, anchor: ["path"] }],
  alsoRefused: [403],
  alsoValid: [400, 403, 500],
};
const FS_READ = {
  variants: [{ body: { path: "/../fuzz" }, anchor: ["path"] }],
  alsoRefused: [403],
  alsoValid: [403, 500],
};

export const JSON_ROUTES: JsonRoute[] = [
  {
    path: "/api/fs/list",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/list"),
    ...FS_READ,
  },
  { path: "/api/fs/get", group: "fs-metas", caller: "user", ...fromSchema("/api/fs/get"), ...FS_READ },
  { path: "/api/fs/dirs", group: "fs-metas", caller: "user", ...fromSchema("/api/fs/dirs"), ...FS_READ },
  { path: "/api/fs/other", group: "fs-metas", caller: "user", ...fromSchema("/api/fs/other"), ...FS_READ },
  // Writes: a climbing path refuses every body (403); a valid one from the fuzz user (the guest
  // role: read only) is refused for want of the permission bit, so nothing changes.
  { path: "/api/fs/mkdir", group: "fs-metas", caller: "user", ...fromSchema("/api/fs/mkdir"), ...FS_WRITE },
  { path: "/api/fs/rename", group: "fs-metas", caller: "user", ...fromSchema("/api/fs/rename"), ...FS_WRITE },
  {
    path: "/api/fs/add_offline_download",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/add_offline_download"),
    ...FS_WRITE,
  },
  ...["/api/fs/move", "/api/fs/copy"].map(
    (path): JsonRoute => ({
      path,
      group: "fs-metas",
      caller: "user",
      ...fromSchema(path),
      ...FS_WRITE,
      variants: [{ body: { src_dir: "/../fuzz", names: ["a"] }, anchor: ["src_dir"] }],
    }),
  ),
  {
    path: "/api/fs/remove",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/remove"),
    ...FS_WRITE,
    variants: [{ body: { dir: "/../fuzz", names: ["a"] }, anchor: ["dir"] }],
  },
  {
    path: "/api/fs/batch_rename",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/batch_rename"),
    ...FS_WRITE,
    variants: [{ body: { src_dir: "/../fuzz" }, anchor: ["src_dir"] }],
  },
  {
    path: "/api/fs/regex_rename",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/regex_rename"),
    ...FS_WRITE,
    variants: [{ body: { src_dir: "/../fuzz", src_name_regex: "a", new_name_regex: "b" }, anchor: ["src_dir"] }],
  },
  {
    path: "/api/fs/recursive_move",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/recursive_move"),
    ...FS_WRITE,
    variants: [{ body: { src_dir: "/../fuzz" }, anchor: ["src_dir"] }],
  },
  {
    path: "/api/fs/remove_empty_directory",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/remove_empty_directory"),
    ...FS_WRITE,
    variants: [{ body: { src_dir: "/../fuzz" }, anchor: ["src_dir"] }],
  },
  // Archives: a climbing path refuses every body (403), as any file read.
  ...["/api/fs/archive/meta", "/api/fs/archive/list"].map(
    (path): JsonRoute => ({ path, group: "fs-metas", caller: "user", ...fromSchema(path), ...FS_READ }),
  ),
  {
    path: "/api/fs/archive/decompress",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/archive/decompress", {
      // A name or a list of names: the one field of the table with two types.
      name: {
        kind: "string",
        required: true,
        invalid: fc.oneof(finiteNumber, fc.boolean(), anyObject, fc.constant(null), tooLong(1024)),
        free: fc.oneof(unicodeText(64), fc.array(unicodeText(20), { maxLength: 3 })),
      },
    }),
    ...FS_WRITE,
    variants: [{ body: { src_dir: "/../fuzz", name: "a.zip" }, anchor: ["src_dir"] }],
  },
  // Admins only: the fuzz user is refused (403) whatever it sends.
  { path: "/api/fs/link", group: "fs-metas", caller: "user", ...fromSchema("/api/fs/link"), ...FS_WRITE },
  // search_index is none (the default): 500 `search not available` to any well-formed body.
  {
    path: "/api/admin/index/update",
    group: "fs-metas",
    caller: "admin",
    ...fromSchema("/api/admin/index/update"),
    variants: [{ body: {}, anchor: [] }],
    alsoRefused: [500],
    alsoValid: [500],
  },
  {
    path: "/api/fs/get_direct_upload_info",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/get_direct_upload_info"),
    ...FS_WRITE,
  },
  // A torrent the fuzz makes is never well-formed (400); rapid_upload is refused (400) whatever it gets.
  {
    path: "/api/fs/torrent/parse",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/torrent/parse"),
    variants: [{ body: { torrent_data: "%%" }, anchor: [] }],
    alsoValid: [400],
  },
  {
    path: "/api/fs/torrent/rapid_upload",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/torrent/rapid_upload"),
    variants: [{ body: { torrent_data: "%%", path: "/" }, anchor: [] }],
    alsoValid: [400],
  },
  // search_index is none (the default): 500 `search not available` to any well-formed body.
  {
    path: "/api/admin/scan/start",
    group: "fs-metas",
    caller: "admin",
    ...fromSchema("/api/admin/scan/start"),
    variants: [{ body: {}, anchor: [] }],
    alsoRefused: [500],
    alsoValid: [500],
  },
  // search_index is none (the default): 500 `search not available` to any well-formed body.
  {
    path: "/api/fs/search",
    group: "fs-metas",
    caller: "user",
    ...fromSchema("/api/fs/search"),
    variants: [{ body: {}, anchor: [] }],
    alsoRefused: [500],
    alsoValid: [500],
  },
  {
    path: "/api/admin/meta/create",
    group: "fs-metas",
    caller: "admin",
    ...fromSchema("/api/admin/meta/create"),
    // A hide line that is no pattern keeps every create refused.
    variants: [{ body: { path: "/fuzz-meta", hide: "(" }, anchor: ["hide"] }],
  },
  {
    path: "/api/admin/meta/update",
    group: "fs-metas",
    caller: "admin",
    ...fromSchema("/api/admin/meta/update", { id: rowIds }),
    variants: [{ body: { id: MISSING_ID, path: "/fuzz-meta" }, anchor: ["id"] }],
  },
  // Share links: the fuzz user holds no share bit, so every body is refused and nothing is made.
  ...["/api/share/create", "/api/share/update"].map(
    (path): JsonRoute => ({
      path,
      group: "fs-metas",
      caller: "user",
      ...fromSchema(path),
      variants: [{ body: { id: "fuzz", files: [] }, anchor: ["files"] }],
      alsoRefused: [403],
      alsoValid: [400, 403, 404],
    }),
  ),
  // auth and me
  ...["/api/auth/login", "/api/auth/login/hash"].map(
    (path): JsonRoute => ({
      path,
      group: "auth-me",
      caller: "anonymous",
      ...fromSchema(path, signInHints),
      variants: [{ body: wrongCredentials, anchor: [] }],
      headers: freshAddress,
    }),
  ),
  {
    // LDAP sign-in is off in the fuzz fixture: a body that passes validation answers 403 before any
    // directory is asked, including the ones the generators cannot tell from refused (free text that
    // sign-in takes as it is, as password sign-in answers them 400 for wrong credentials).
    path: "/api/auth/login/ldap",
    group: "auth-me",
    caller: "anonymous",
    ...fromSchema("/api/auth/login/ldap", signInHints),
    variants: [{ body: wrongCredentials, anchor: [] }],
    headers: freshAddress,
    alsoValid: [403],
    alsoRefused: [403],
  },
  {
    // No 2FA enrolment is pending (checked at start), so no code and secret can be right.
    path: "/api/auth/2fa/verify",
    group: "auth-me",
    caller: "user",
    ...fromSchema("/api/auth/2fa/verify"),
    variants: [{ body: { code: "000000", secret: "JBSWY3DPEHPK3PXP" }, anchor: [] }],
  },
  {
    path: "/api/me/update",
    group: "auth-me",
    caller: "user",
    ...fromSchema("/api/me/update", { username: { trim: true } }),
    variants: [{ body: { username: "admin" }, anchor: ["username"] }],
  },
  // Passkeys: webauthn_login_enabled is off in the fuzz fixture, so a body of the right shape is 403.
  ...["/api/authn/webauthn_finish_registration", "/api/authn/webauthn_finish_login"].map(
    (path): JsonRoute => ({
      path,
      group: "auth-me",
      caller: path.endsWith("login") ? "anonymous" : "user",
      ...fromSchema(path),
      variants: [{ body: { id: "fuzz", response: { clientDataJSON: "" } }, anchor: [] }],
      alsoRefused: [403],
      alsoValid: [403],
    }),
  ),
  {
    path: "/api/authn/delete_authn",
    group: "auth-me",
    caller: "user",
    ...fromSchema("/api/authn/delete_authn"),
    variants: [{ body: { id: "fuzz-no-such-passkey" }, anchor: [] }],
    alsoRefused: [403],
    alsoValid: [403],
  },
  // sessions and SSH keys
  ...(["user", "admin"] as const).map(
    (caller): JsonRoute => ({
      path: caller === "user" ? "/api/me/sessions/evict" : "/api/admin/session/evict",
      group: "sessions-sshkeys",
      caller,
      ...fromSchema(caller === "user" ? "/api/me/sessions/evict" : "/api/admin/session/evict", sessionIdHints),
      variants: [{ body: { session_id: "fuzz-no-such-session" }, anchor: [] }],
    }),
  ),
  {
    path: "/api/me/sshkey/add",
    group: "sessions-sshkeys",
    caller: "user",
    ...fromSchema("/api/me/sshkey/add", {
      title: { trim: true },
      // DSA keys are refused whatever follows the type.
      key: {
        invalid: unicodeText(64).map((s) => `ssh-dss AAAAB3NzaC1kc3M${s}`),
        free: fc.oneof(unicodeText(64), mangledKey),
      },
    }),
    variants: [
      { body: { title: EXISTING_KEY_TITLE, key: VALID_SSH_KEY }, anchor: ["title"] },
      { body: { title: "fuzz-new", key: "ssh-dss AAAAB3NzaC1kc3M" }, anchor: ["key"] },
    ],
  },
  // An existing name: a valid body is refused as a duplicate, so the fuzz makes no app password.
  {
    path: "/api/me/app_password/create",
    group: "sessions-sshkeys",
    caller: "user",
    ...fromSchema("/api/me/app_password/create", { name: { trim: true } }),
    variants: [{ body: { name: EXISTING_KEY_TITLE }, anchor: ["name"] }],
  },
  // Access keys are app password rows: the same existing name refuses a valid body; a folder
  // outside the fuzz user's reach is 403 first.
  {
    path: "/api/me/access_key/create",
    group: "sessions-sshkeys",
    caller: "user",
    ...fromSchema("/api/me/access_key/create", { name: { trim: true } }),
    variants: [{ body: { name: EXISTING_KEY_TITLE }, anchor: ["name"] }],
    alsoRefused: [403],
  },
  // Ids that exist are never generated: a random one would revoke the fuzz user's app password.
  ...(["user", "admin"] as const).map(
    (caller): JsonRoute => ({
      path: caller === "user" ? "/api/me/access_key/delete" : "/api/admin/access_key/delete",
      group: "sessions-sshkeys",
      caller,
      ...fromSchema(caller === "user" ? "/api/me/access_key/delete" : "/api/admin/access_key/delete", {
        id: { free: fc.constant(MISSING_ID) },
      }),
      variants: [{ body: { id: MISSING_ID }, anchor: ["id"] }],
    }),
  ),
  // settings
  {
    path: "/api/admin/setting/save",
    group: "settings",
    caller: "admin",
    ...fromSchema("/api/admin/setting/save", {
      key: { free: fc.oneof(fc.constantFrom(...SETTING_KEYS), unicodeText(32)) },
      value: {
        free: fc.oneof(unicodeText(64), fc.constantFrom("true", "false", "{}", "[]", '{"a":1}', ...NUMERIC_STRINGS)),
      },
    }),
    variants: [{ body: { key: "site_title", value: "AList" }, anchor: [] }],
    // Saved with an unknown key, or twice in one request: refused as a whole.
    wrap: (item, choice) =>
      [
        [item, UNKNOWN_SETTING],
        [UNKNOWN_SETTING, item],
        [item, item],
      ][choice % 3],
  },
  {
    path: "/api/admin/setting/set_token",
    group: "settings",
    caller: "admin",
    ...fromSchema("/api/admin/setting/set_token", { token: { trim: true, invalid: refusedToken } }),
    variants: [{ body: { token: "short" }, anchor: ["token"] }],
  },
  {
    path: "/api/admin/setting/set_aria2",
    group: "settings",
    caller: "admin",
    ...fromSchema("/api/admin/setting/set_aria2", { uri: { trim: true, invalid: unfetchableUrl(false) } }),
    variants: [{ body: { uri: "ws://127.0.0.1:1/jsonrpc", secret: "" }, anchor: ["uri"] }],
  },
  {
    path: "/api/admin/setting/set_qbit",
    group: "settings",
    caller: "admin",
    ...fromSchema("/api/admin/setting/set_qbit", {
      url: {
        trim: true,
        invalid: unfetchableUrl(true),
        free: fc.oneof(
          unicodeText(40),
          fc.constantFrom("http://127.0.0.1:1/", "http://admin:x@127.0.0.1:1/", "https://127.0.0.1:1/"),
        ),
      },
      // The schema's pattern is checked after trimming: strings it refuses, and whole numbers.
      seedtime: {
        trim: true,
        invalid: fc.oneof(
          fc.constantFrom("", " ", "-1", "1.5", "1e3", "0x10", "1234567890", "١", "１", "NaN"),
          unicodeText(8).filter((s) => !/^\d{1,9}$/.test(s.trim())),
        ),
        free: fc.oneof(fc.nat(999_999_999).map(String), unicodeText(8)),
      },
    }),
    // Never a request that passes validation with a fetchable URL: the Worker would call out.
    variants: [
      { body: { url: "http://127.0.0.1:1/", seedtime: "soon" }, anchor: ["seedtime"] },
      { body: { url: "ftp://127.0.0.1:1/", seedtime: "0" }, anchor: ["url"] },
    ],
  },
  {
    path: "/api/admin/setting/set_transmission",
    group: "settings",
    caller: "admin",
    ...fromSchema("/api/admin/setting/set_transmission", {
      uri: {
        trim: true,
        invalid: unfetchableUrl(true),
        free: fc.oneof(
          unicodeText(40),
          fc.constantFrom("http://127.0.0.1:1/transmission/rpc", "http://u:p@127.0.0.1:1/transmission/rpc"),
        ),
      },
      seedtime: {
        trim: true,
        invalid: fc.oneof(
          fc.constantFrom("", " ", "-1", "1.5", "1e3", "0x10", "1234567890", "١", "１", "NaN"),
          unicodeText(8).filter((s) => !/^\d{1,9}$/.test(s.trim())),
        ),
        free: fc.oneof(fc.nat(999_999_999).map(String), unicodeText(8)),
      },
    }),
    // Never a request that passes validation with a fetchable URI: the Worker would call out.
    variants: [
      { body: { uri: "http://127.0.0.1:1/transmission/rpc", seedtime: "soon" }, anchor: ["seedtime"] },
      { body: { uri: "ftp://127.0.0.1:1/", seedtime: "0" }, anchor: ["uri"] },
    ],
  },
  // The cloud-drive tools and the messenger's send: refused (400) whatever a valid body says.
  ...[
    "set_115",
    "set_115_open",
    "set_123_pan",
    "set_123_open",
    "set_pikpak",
    "set_thunder",
    "set_thunder_browser",
    "set_thunderx",
    "set_guangyapan",
  ].map(
    (name): JsonRoute => ({
      path: `/api/admin/setting/${name}`,
      group: "settings",
      caller: "admin",
      ...fromSchema(`/api/admin/setting/${name}`),
      variants: [{ body: {}, anchor: [] }],
      alsoValid: [400],
    }),
  ),
  {
    path: "/api/admin/message/send",
    group: "settings",
    caller: "admin",
    ...fromSchema("/api/admin/message/send"),
    variants: [{ body: {}, anchor: [] }],
    alsoValid: [400],
  },
  // users and roles
  {
    path: "/api/admin/user/create",
    group: "users-roles",
    caller: "admin",
    ...fromSchema("/api/admin/user/create", userHints),
    variants: [
      { body: { username: "admin", password: "x" }, anchor: ["username"] },
      { body: { username: "fuzz-new", password: "x", role: [MISSING_ID] }, anchor: ["role"] },
      { body: { username: "fuzz-new", password: "x", role: [ROLE_IDS.admin] }, anchor: ["role"] },
    ],
  },
  {
    path: "/api/admin/user/update",
    group: "users-roles",
    caller: "admin",
    ...fromSchema("/api/admin/user/update", { ...userHints, id: rowIds }),
    // Besides an id that does not exist, the rules' refusals: each must save none of the other fields.
    variants: [
      { body: { id: MISSING_ID }, anchor: ["id"] },
      { body: { id: USER_IDS.admin, disabled: true }, anchor: ["id", "disabled"] },
      { body: { id: USER_IDS.guest, role: [MISSING_ID] }, anchor: ["id", "role"] },
      { body: { id: USER_IDS[FUZZ_USER], role: [ROLE_IDS.guest] }, anchor: ["id", "role"] },
    ],
  },
  {
    path: "/api/admin/role/create",
    group: "users-roles",
    caller: "admin",
    ...fromSchema("/api/admin/role/create", roleHints),
    variants: [{ body: { name: "admin" }, anchor: ["name"] }],
  },
  {
    path: "/api/admin/role/update",
    group: "users-roles",
    caller: "admin",
    ...fromSchema("/api/admin/role/update", { ...roleHints, id: rowIds }),
    variants: [
      { body: { id: MISSING_ID }, anchor: ["id"] },
      { body: { id: ROLE_IDS.admin }, anchor: ["id"] },
      { body: { id: ROLE_IDS.guest, name: "fuzz-renamed" }, anchor: ["id", "name"] },
    ],
  },
  // storages: the insert or update is refused before any driver check, so nothing calls out
  {
    path: "/api/admin/storage/create",
    group: "storages-drivers",
    caller: "admin",
    ...fromSchema(
      "/api/admin/storage/create",
      storageHints({ kind: "unknown", required: false, invalid: null, free: smallJson }),
    ),
    variants: [
      { body: { mount_path: EXISTING_MOUNT, driver: "Virtual", addition: "{}" }, anchor: ["mount_path"] },
      { body: { mount_path: "/fuzz-new", driver: "NoSuchDriver", addition: "{}" }, anchor: ["driver"] },
      {
        body: { mount_path: EXISTING_MOUNT, driver: "Alias", addition: '{"paths":"/fuzz-existing"}' },
        anchor: ["mount_path", "driver"],
      },
    ],
  },
  {
    path: "/api/admin/storage/update",
    group: "storages-drivers",
    caller: "admin",
    ...fromSchema(
      "/api/admin/storage/update",
      storageHints({
        kind: "unknown",
        required: true,
        invalid: fc.oneof(
          fc.constantFrom(
            null,
            0,
            -1,
            "0",
            "-1",
            "abc",
            "",
            " 1",
            "01",
            "1.5",
            1.5,
            true,
            "1e3",
            1e21,
            "9999999999999999",
            [],
            {},
            [1],
          ),
          fc.constantFrom("-0", "1e309").map((json) => new Raw(json)),
        ),
        free: fc.constantFrom(1, 2, "1", MISSING_ID),
      }),
    ),
    variants: [
      { body: { id: MISSING_ID, mount_path: "/fuzz-new", driver: "Virtual", addition: "{}" }, anchor: ["id"] },
      {
        body: {
          id: MISSING_ID,
          mount_path: "/fuzz-new",
          driver: "Crypt",
          addition: '{"remote_path":"/fuzz-existing","password":"x"}',
        },
        anchor: ["id", "driver"],
      },
      {
        body: { id: MISSING_ID, mount_path: "/fuzz-new", driver: "Alias", addition: '{"paths":"/fuzz-existing"}' },
        anchor: ["id", "driver"],
      },
    ],
  },
];

const READS = [200, 400, 404] as const;
const WRITES = [400, 404] as const;

// Each row's parameters and their kinds are read from its route's schema (queryRoute); a row
// says who calls, what the route may answer, which ids must not be sent, and the words it knows.
const QUERY_ROWS: QueryRow[] = [
  // No storage is mounted and sign_all is on: every sign is refused (401), whatever it holds.
  ...["/d/{path}", "/p/{path}", "/ae/{path}", "/ad/{path}", "/ap/{path}"].map(
    (path): QueryRow => ({ method: "GET", path, group: "fs-metas", caller: "anonymous", answers: [401] }),
  ),
  // Whatever the id, or the path and size, the caller has no such session (400: a query its schema
  // refuses, or neither an id nor a path and size; 403: a relative path, as for every path).
  { method: "GET", path: "/api/fs/multipart/status", group: "fs-metas", caller: "user", answers: [400, 403, 404] },
  { method: "GET", path: "/api/admin/meta/list", group: "fs-metas", caller: "admin", answers: READS },
  { method: "GET", path: "/api/admin/meta/get", group: "fs-metas", caller: "admin", answers: READS },
  { method: "POST", path: "/api/admin/meta/delete", group: "fs-metas", caller: "admin", answers: WRITES },
  // Share links the fuzz user manages: it has none, so each id is unknown (404).
  { method: "GET", path: "/api/share/list", group: "fs-metas", caller: "user", answers: READS },
  { method: "GET", path: "/api/share/get", group: "fs-metas", caller: "user", answers: READS },
  ...["delete", "enable", "disable"].map(
    (action): QueryRow => ({
      method: "POST",
      path: `/api/share/${action}`,
      group: "fs-metas",
      caller: "user",
      answers: WRITES,
    }),
  ),
  ...["/api/auth/login", "/api/auth/login/hash"].map(
    (path): QueryRow => ({
      method: "POST",
      path,
      group: "auth-me",
      caller: "anonymous",
      answers: [400],
      jsonBody: wrongCredentials,
      headers: freshAddress,
    }),
  ),
  // Passkeys, with webauthn_login_enabled off: 403 for any query (400 for one the schema refuses).
  {
    method: "GET",
    path: "/api/authn/webauthn_begin_login",
    group: "auth-me",
    caller: "anonymous",
    answers: [400, 403],
  },
  ...["/api/authn/webauthn_finish_login", "/api/authn/webauthn_finish_registration"].map(
    (path): QueryRow => ({
      method: "POST",
      path,
      group: "auth-me",
      caller: path.endsWith("login") ? "anonymous" : "user",
      answers: [400, 403],
      jsonBody: { id: "fuzz", response: { clientDataJSON: "" } },
    }),
  ),
  {
    method: "POST",
    path: "/api/auth/login/ldap",
    group: "auth-me",
    caller: "anonymous",
    // 400 for a query it refuses, 403 (LDAP off) for one it takes.
    answers: [400, 403],
    jsonBody: wrongCredentials,
    headers: freshAddress,
  },
  // Single sign-on is off: a method is checked first (400), then the setting (403); a callback's
  // random state is unknown (400). Nothing is written either way.
  { method: "GET", path: "/api/auth/sso", group: "auth-me", caller: "anonymous", answers: [400, 403] },
  ...["/api/auth/sso_callback", "/api/auth/sso_get_token", "/api/auth/get_sso_id"].map(
    (path): QueryRow => ({ method: "GET", path, group: "auth-me", caller: "anonymous", answers: [400] }),
  ),
  { method: "GET", path: "/api/me/sshkey/list", group: "sessions-sshkeys", caller: "user", answers: READS },
  { method: "GET", path: "/api/me/sessions", group: "sessions-sshkeys", caller: "user", answers: READS },
  { method: "GET", path: "/api/admin/session/list", group: "sessions-sshkeys", caller: "admin", answers: READS },
  {
    method: "POST",
    path: "/api/me/sshkey/delete",
    group: "sessions-sshkeys",
    caller: "user",
    answers: WRITES,
    refusedIds: { id: [] },
  },
  {
    method: "POST",
    path: "/api/me/app_password/delete",
    group: "sessions-sshkeys",
    caller: "user",
    answers: WRITES,
    refusedIds: { id: [] },
  },
  { method: "GET", path: "/api/admin/user/sshkey/list", group: "sessions-sshkeys", caller: "admin", answers: READS },
  { method: "GET", path: "/api/admin/access_key/list", group: "sessions-sshkeys", caller: "admin", answers: READS },
  {
    method: "POST",
    path: "/api/admin/user/sshkey/delete",
    group: "sessions-sshkeys",
    caller: "admin",
    answers: WRITES,
    refusedIds: { id: [] },
  },
  {
    method: "GET",
    path: "/api/admin/setting/list",
    group: "settings",
    caller: "admin",
    answers: READS,
    hints: { groups: { words: ["0", "1", "5,0", " 1 , 2 ", ",", "1,,2"] }, group: { words: ["0", "1", "99"] } },
  },
  {
    method: "GET",
    path: "/api/admin/setting/get",
    group: "settings",
    caller: "admin",
    answers: READS,
    hints: { key: { words: SETTING_KEYS }, keys: { words: [...SETTING_KEYS, ",", "token,version", " , "] } },
  },
  // Answers the defaults; writes nothing.
  {
    method: "POST",
    path: "/api/admin/setting/default",
    group: "settings",
    caller: "admin",
    answers: READS,
    hints: { groups: { words: ["0", "1", "5,0", " 1 , 2 ", ",", "1,,2"] }, group: { words: ["0", "1", "99"] } },
  },
  // No setting is deprecated (checked at start), so no key can be deleted.
  {
    method: "POST",
    path: "/api/admin/setting/delete",
    group: "settings",
    caller: "admin",
    answers: WRITES,
    hints: { key: { words: SETTING_KEYS } },
  },
  { method: "GET", path: "/api/admin/user/list", group: "users-roles", caller: "admin", answers: READS },
  { method: "GET", path: "/api/admin/user/get", group: "users-roles", caller: "admin", answers: READS },
  {
    method: "POST",
    path: "/api/admin/user/delete",
    group: "users-roles",
    caller: "admin",
    answers: WRITES,
    hints: { id: { words: [`${USER_IDS.admin}`, `${USER_IDS.guest}`] } },
    refusedIds: { id: [`${USER_IDS.admin}`, `${USER_IDS.guest}`] },
  },
  {
    method: "POST",
    path: "/api/admin/user/cancel_2fa",
    group: "users-roles",
    caller: "admin",
    answers: WRITES,
    refusedIds: { id: [] },
  },
  // Does nothing whatever it gets.
  {
    method: "POST",
    path: "/api/admin/user/del_cache",
    group: "users-roles",
    caller: "admin",
    answers: [200, 400],
    hints: { username: { words: ["admin", FUZZ_USER] } },
  },
  { method: "GET", path: "/api/admin/role/list", group: "users-roles", caller: "admin", answers: READS },
  { method: "GET", path: "/api/admin/role/get", group: "users-roles", caller: "admin", answers: READS },
  {
    method: "POST",
    path: "/api/admin/role/delete",
    group: "users-roles",
    caller: "admin",
    answers: WRITES,
    hints: { id: { words: [`${ROLE_IDS.admin}`, `${ROLE_IDS.guest}`] } },
    refusedIds: { id: [`${ROLE_IDS.admin}`, `${ROLE_IDS.guest}`] },
  },
  {
    method: "GET",
    path: "/api/admin/driver/info",
    group: "storages-drivers",
    caller: "admin",
    answers: READS,
    hints: { driver: { words: DRIVERS } },
  },
  { method: "GET", path: "/api/admin/storage/list", group: "storages-drivers", caller: "admin", answers: READS },
  { method: "GET", path: "/api/admin/storage/get", group: "storages-drivers", caller: "admin", answers: READS },
  ...["delete", "enable", "disable"].map(
    (action): QueryRow => ({
      method: "POST",
      path: `/api/admin/storage/${action}`,
      group: "storages-drivers",
      caller: "admin",
      answers: WRITES,
      refusedIds: { id: [] },
    }),
  ),
];

// The task routes, under both prefixes, on the copy kind: no task exists, so every id is unknown.
const TASK_PREFIXES = ["/api/task", "/api/admin/task"] as const;
QUERY_ROWS.push(
  ...TASK_PREFIXES.flatMap((prefix) =>
    ["info", "cancel", "delete", "retry"].map(
      (op): QueryRow => ({
        method: "POST",
        path: `${prefix}/{kind}/${op}`,
        url: `${prefix}/copy/${op}`,
        group: "tasks",
        caller: "admin",
        answers: WRITES,
      }),
    ),
  ),
);

export const QUERY_ROUTES: QueryRoute[] = QUERY_ROWS.map(queryRoute);

/**
 * POST routes whose only input is headers (the chunked upload API, as OpenList's web UI calls it):
 * no body or query to fuzz; src/features/uploads/uploads.workerd.test.ts covers their refusals.
 */
export const HEADER_ROUTES = ["/api/fs/multipart/init", "/api/fs/multipart/complete", "/api/fs/multipart/abort"];

export const BODYLESS_ROUTES: BodylessRoute[] = [
  {
    path: "/api/auth/2fa/generate",
    group: "auth-me",
    caller: "user",
    keep: async (db) => async () => {
      await db.delete(pendingOtpEnrolments);
    },
  },
  {
    path: "/api/admin/setting/reset_token",
    group: "settings",
    caller: "admin",
    keep: async (db) => {
      const [token] = await db.select().from(settings).where(sql`${settings.key} = 'token'`);
      return async () => {
        await db.update(settings).set({ value: token!.value }).where(sql`${settings.key} = 'token'`);
      };
    },
  },
  { path: "/api/admin/storage/load_all", group: "storages-drivers", caller: "admin", keep: async () => async () => {} },
  // The messenger's inbox is always empty (404); no scan runs (400).
  {
    path: "/api/admin/message/get",
    group: "settings",
    caller: "admin",
    keep: async () => async () => {},
    answers: [404],
  },
  {
    path: "/api/admin/scan/stop",
    group: "fs-metas",
    caller: "admin",
    keep: async () => async () => {},
    answers: [400],
  },
  // search_index is none (the default): `search not available` whatever the body.
  ...["build", "stop", "clear"].map(
    (name): BodylessRoute => ({
      path: `/api/admin/index/${name}`,
      group: "fs-metas",
      caller: "admin",
      keep: async () => async () => {},
      answers: [500],
    }),
  ),
  // The task clears ignore any body; the batch operations read an id array (else 400) and find none.
  ...TASK_PREFIXES.flatMap((prefix) => [
    ...["clear_done", "clear_succeeded", "retry_failed"].map(
      (op): BodylessRoute => ({
        path: `${prefix}/{kind}/${op}`,
        url: `${prefix}/copy/${op}`,
        group: "tasks",
        caller: "admin",
        keep: async () => async () => {},
      }),
    ),
    ...["cancel_some", "delete_some", "retry_some"].map(
      (op): BodylessRoute => ({
        path: `${prefix}/{kind}/${op}`,
        url: `${prefix}/copy/${op}`,
        group: "tasks",
        caller: "admin",
        answers: [200, 400],
        keep: async () => async () => {},
      }),
    ),
  ]),
];

// ---------------------------------------------------------------------------------------------
// Request builders

const JSON_TYPE = "application/json;charset=UTF-8";
const NON_JSON_TYPES = [
  null,
  "text/plain",
  "text/plain;charset=UTF-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=fuzz",
  "application/xml",
  "application/octet-stream",
  "text/html",
  "image/png",
];
const JSONISH_TYPES = [
  "application/json",
  "APPLICATION/JSON",
  "application/json; charset=utf-16",
  "application/json;charset=latin1",
  "application/vnd.api+json",
  "application/json-patch+json",
  "text/json",
  "application/jsonx",
  "application/json ; charset=UTF-8",
  " application/json",
];
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});

/** Bytes that are not UTF-8: stray continuation bytes, overlong NUL, encoded surrogates, cut sequences, and raw controls. */
const BAD_BYTES = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0x00],
  [0x1b],
  [0xf0, 0x9f],
];

const REFUSED = [400, 404] as const;

function fieldNames(route: JsonRoute): string[] {
  return Object.keys(route.fields);
}

/** The body of a variant with every other field free: absent, or any value of its type. */
function freeBody(route: JsonRoute, variant: Variant): fc.Arbitrary<Record<string, unknown>> {
  const free = Object.fromEntries(
    fieldNames(route)
      .filter((name) => !variant.anchor.includes(name))
      .map((name) => [name, fc.option(route.fields[name]!.free, { nil: undefined, freq: 3 })]),
  );
  return fc.record(free).map((values) => ({
    ...variant.body,
    ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)),
  }));
}

const variantOf = (route: JsonRoute) => fc.constantFrom(...route.variants);
const withChoice = <T>(arbitrary: fc.Arbitrary<T>) => fc.tuple(arbitrary, fc.nat(2));
const wrapped = (route: JsonRoute, item: unknown, choice: number) => (route.wrap ? route.wrap(item, choice) : item);

function jsonRequest(route: JsonRoute, body: string | Uint8Array, contentType: string | null = JSON_TYPE): FuzzRequest {
  return {
    method: "POST",
    path: route.path,
    caller: route.caller,
    contentType,
    body,
    ...(route.headers ? { headers: route.headers() } : {}),
  };
}

/** A request with its expected codes; a body the generators made larger than the limit can only get 413. */
function jsonCase(
  route: JsonRoute,
  body: string | Uint8Array,
  answers: readonly number[],
  contentType: string | null = JSON_TYPE,
): Case {
  const size = typeof body === "string" ? Buffer.byteLength(body) : body.length;
  const extra = answers.includes(200) ? (route.alsoValid ?? []) : answers === REFUSED ? (route.alsoRefused ?? []) : [];
  return {
    request: jsonRequest(route, body, contentType),
    answers: size > MAX_BODY_BYTES ? [413] : [...answers, ...extra],
  };
}

/** Does a random JSON value name a field of the route (and so might be partly valid)? */
function namesAField(route: JsonRoute, value: unknown): boolean {
  const objects = route.wrap ? (Array.isArray(value) ? value : []) : [value];
  return objects.some(
    (o) =>
      o !== null &&
      typeof o === "object" &&
      !Array.isArray(o) &&
      Object.keys(o).some((key) => Object.hasOwn(route.fields, key)),
  );
}

/** A body that names no field: valid only on routes whose fields are all optional (an empty object, or an empty array of items). */
function emptyBody(route: JsonRoute, value: unknown): boolean {
  if (!route.emptyIsValid) return false;
  if (route.wrap) return Array.isArray(value) && value.length === 0;
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const DEEP = 100_000;
/** JSON a parser or a validator may choke on. */
const NASTY_JSON = [
  '{"__proto__":{"isAdmin":true,"username":"admin"}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  "[".repeat(DEEP) + "]".repeat(DEEP),
  `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`,
  "1e999999",
  '""',
  "  null  ",
  JSON.stringify(JSON.stringify({ username: "admin" })),
  `[${"0,".repeat(50_000)}0]`,
];

interface FuzzProperty {
  name: string;
  run: (context: FuzzContext) => Promise<void>;
}

/** The properties of one JSON route. */
function jsonRouteProperties(route: JsonRoute): FuzzProperty[] {
  const names = fieldNames(route);
  const stringFields = (variant: Variant) =>
    names.filter((name) => route.fields[name]!.kind === "string" && !variant.anchor.includes(name));
  return [
    {
      name: "random JSON of the wrong shape",
      run: (context) =>
        checkProperty(
          context,
          fc
            .oneof(
              { weight: 3, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
              {
                weight: 3,
                arbitrary: fc
                  .anything({
                    maxDepth: 3,
                    withBoxedValues: true,
                    withMap: true,
                    withSet: true,
                    withNullPrototype: true,
                    withDate: true,
                    withTypedArray: true,
                    withSparseArray: true,
                  })
                  .map((v) => JSON.stringify(v) ?? ""),
              },
              { weight: 1, arbitrary: fc.constantFrom(...NASTY_JSON) },
            )
            .filter((text) => !namesAField(route, parseOrUndefined(text))),
          (body) => jsonCase(route, body, emptyBody(route, parseOrUndefined(body)) ? [200] : [400]),
          25,
        ),
    },
    {
      name: "the right keys with a wrong type or a value out of range",
      run: (context) =>
        checkProperty(
          context,
          withChoice(
            variantOf(route).chain((variant) =>
              fc.tuple(
                freeBody(route, variant),
                fc
                  .constantFrom(...names.filter((name) => route.fields[name]!.invalid))
                  .chain((name) => fc.tuple(fc.constant(name), route.fields[name]!.invalid!, fc.boolean())),
              ),
            ),
          ),
          ([[body, [name, bad, drop]], choice]) => {
            const required = route.fields[name]!.required;
            const broken =
              drop && required
                ? Object.fromEntries(Object.entries(body).filter(([key]) => key !== name))
                : { ...body, [name]: bad };
            return jsonCase(route, toJson(wrapped(route, broken, choice)), [400]);
          },
          30,
        ),
    },
    {
      name: "unicode and any other value in the free fields",
      run: (context) =>
        checkProperty(
          context,
          withChoice(variantOf(route).chain((variant) => freeBody(route, variant))),
          ([body, choice]) => jsonCase(route, toJson(wrapped(route, body, choice)), REFUSED),
          25,
        ),
    },
    {
      name: "numbers out of range and number-like strings",
      run: (context) =>
        checkProperty(
          context,
          withChoice(
            variantOf(route).chain((variant) =>
              fc.constantFrom(...names).chain((name) => {
                const value = variant.anchor.includes(name) ? route.fields[name]!.invalid! : edgeNumber;
                return value.map((v) => ({ ...variant.body, [name]: v }));
              }),
            ),
          ),
          ([body, choice]) => jsonCase(route, toJson(wrapped(route, body, choice)), REFUSED),
          20,
        ),
    },
    {
      name: "duplicate keys (the anchor's value last)",
      run: (context) =>
        checkProperty(
          context,
          withChoice(
            variantOf(route).chain((variant) =>
              fc.tuple(
                fc.constant(variant),
                freeBody(route, variant),
                fc.uniqueArray(
                  fc.constantFrom(...names).chain((name) => {
                    const field = route.fields[name]!;
                    const value = field.invalid ? fc.oneof(field.free, field.invalid) : field.free;
                    return fc.tuple(fc.constant(name), value, value, fc.nat());
                  }),
                  { minLength: 1, maxLength: 3, selector: ([name]) => name },
                ),
              ),
            ),
          ),
          ([[variant, body, duplicates], choice]) => {
            const entries: (readonly [string, unknown])[] = Object.entries(body);
            for (const [name, first, second, position] of duplicates) {
              const anchorAt = entries.findIndex(([key]) => key === name);
              // An anchor keeps its value by coming last; JSON.parse keeps the last of a key.
              const at = variant.anchor.includes(name) ? anchorAt : position % (entries.length + 1);
              entries.splice(at, 0, [name, first], [name, second]);
            }
            return jsonCase(route, toJson(wrapped(route, new Entries(entries), choice)), REFUSED);
          },
          15,
        ),
    },
    {
      name: "a wrong Content-Type, or none",
      run: (context) =>
        checkProperty(
          context,
          fc.tuple(
            withChoice(variantOf(route).chain((variant) => freeBody(route, variant))),
            fc.oneof(
              fc.constantFrom(...NON_JSON_TYPES).map((type) => ({ type, json: false })),
              fc.constantFrom(...JSONISH_TYPES).map((type) => ({ type, json: true })),
              headerText.map((type) => ({ type, json: true })),
            ),
            fc.constantFrom("json", "form", "empty"),
          ),
          ([[body, choice], { type, json }, encoding]) => {
            const payload = wrapped(route, body, choice);
            const text =
              encoding === "json"
                ? toJson(payload)
                : encoding === "form"
                  ? Object.entries(body)
                      .map(
                        ([k, v]) =>
                          `${encodeURIComponent(k)}=${encodeURIComponent(wellFormed(typeof v === "string" ? v : toJson(v)))}`,
                      )
                      .join("&")
                  : "";
            // A type that is not JSON is refused before the body is read; one that may be is read,
            // and the body is refused.
            return jsonCase(route, text, json ? REFUSED : [400], type);
          },
          12,
        ),
    },
    {
      name: "a valid-looking body cut at a random byte",
      run: (context) =>
        checkProperty(
          context,
          fc.tuple(
            withChoice(variantOf(route).chain((variant) => freeBody(route, variant))),
            fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          ),
          ([[body, choice], cut]) => {
            const bytes = new TextEncoder().encode(toJson(wrapped(route, body, choice)));
            return jsonCase(route, bytes.subarray(0, Math.floor(cut * bytes.length)), [400]);
          },
          12,
        ),
    },
    {
      name: "bytes that are not UTF-8 inside a string, or a byte-order mark",
      run: (context) =>
        checkProperty(
          context,
          withChoice(
            variantOf(route).chain((variant) =>
              fc.tuple(
                freeBody(route, variant),
                stringFields(variant).length > 0 ? fc.constantFrom(...stringFields(variant)) : fc.constant(null),
                fc.array(fc.constantFrom(...BAD_BYTES), { minLength: 1, maxLength: 4 }),
                fc.boolean(),
              ),
            ),
          ),
          ([[body, name, damage, bom], choice]) => {
            const marker = "\u0001FUZZ\u0001";
            const text = toJson(wrapped(route, name === null ? body : { ...body, [name]: marker }, choice));
            const encoded = new TextEncoder().encode(text);
            const bad = damage.flat();
            // Where the marker was (inside a string), or in front of the whole body.
            const markerJson = new TextEncoder().encode(JSON.stringify(marker).slice(1, -1));
            const at = name === null ? 0 : indexOfBytes(encoded, markerJson);
            const bytes = new Uint8Array([
              ...(bom ? [0xef, 0xbb, 0xbf] : []),
              ...encoded.subarray(0, at),
              ...bad,
              ...encoded.subarray(at + (name === null ? 0 : markerJson.length)),
            ]);
            return jsonCase(route, bytes, REFUSED);
          },
          12,
        ),
    },
    {
      name: `a huge string: up to the body limit (${MAX_BODY_BYTES} bytes) refused as input, just over it 413`,
      run: (context) =>
        checkProperty(
          context,
          fc.record({
            body: withChoice(variantOf(route).chain((variant) => freeBody(route, variant))),
            name: fc.constantFrom(...names),
            over: fc.boolean(),
            slack: fc.nat(64),
            pad: fc.constantFrom("a", "é", "€", "😀"),
            chunked: fc.boolean(),
          }),
          ({ body: [body, choice], name, over, slack, pad, chunked }) => {
            const target = over ? MAX_BODY_BYTES + 1 + slack : MAX_BODY_BYTES - slack;
            const size = (filler: string) =>
              Buffer.byteLength(toJson(wrapped(route, { ...body, [name]: filler }, choice)));
            // The field may appear more than once in the body (settings/save sends an item twice).
            const copies = size("a") - size("");
            const padCount = Math.floor((target - size("")) / (Buffer.byteLength(pad) * copies));
            const rest = (target - size(pad.repeat(padCount))) / copies;
            const filler = pad.repeat(padCount) + "a".repeat(over ? Math.ceil(rest) : Math.floor(rest));
            const text = toJson(wrapped(route, { ...body, [name]: filler }, choice));
            return {
              request: { ...jsonRequest(route, text), chunked },
              answers: over ? [413] : [...REFUSED, ...(route.alsoRefused ?? [])],
            };
          },
          4,
        ),
    },
  ];
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error("marker not found in the body");
}

/** Lone surrogates replaced, as encodeURIComponent needs. */
function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

/** Raw query text: stray percent signs, encoded surrogates and overlong bytes, separators, a fragment. */
const QUERY_JUNK = [
  "%",
  "%2",
  "%zz",
  "%FF",
  "%ED%A0%80",
  "%C0%80",
  "%00",
  "%0A",
  "+",
  "%2B",
  "&",
  "=",
  ";",
  "#",
  "?",
  "/",
  "..",
  "\\",
  " ",
  "%20",
  "é",
  "\ud800",
  "😀",
  "a",
  "0",
  "-",
  "[]",
  "[0]",
  "%5B%5D",
  "\u0000",
];
const rawJunk = fc.array(fc.constantFrom(...QUERY_JUNK), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(""));
const encoded = (values: fc.Arbitrary<string>) => values.map((v) => encodeURIComponent(wellFormed(v)));

const ID_STRINGS = [
  "",
  "0",
  "-1",
  "00",
  "01",
  "1.0",
  "1e3",
  "0x1",
  " 1",
  "1 ",
  "+1",
  "NaN",
  "Infinity",
  "-0",
  "9007199254740993",
  "99999999999999999",
  "1".repeat(20),
  "１",
  "١",
];
const PAGE_STRINGS = [
  "",
  "0",
  "-1",
  "1",
  "1000",
  "1001",
  "999999999",
  "1000000000",
  "-999999999",
  "1.5",
  "1e3",
  "abc",
  " 2",
  "99999999999999999999",
];

/** Text at the edges of what its schema declares: empty when it needs a character, at and just past its longest, matching its pattern and just missing it. */
function schemaText(param: QueryParam): fc.Arbitrary<string>[] {
  const { minLength, maxLength, pattern } = param;
  return [
    ...(minLength !== undefined && minLength > 0 ? [fc.constantFrom("", " ", "\t")] : []),
    ...(maxLength === undefined
      ? []
      : [
          fc
            .tuple(
              fc.integer({ min: Math.max(0, maxLength - 1), max: maxLength + 40 }),
              fc.constantFrom("x", "é", "😀"),
            )
            .map(([n, pad]) => pad.repeat(n)),
        ]),
    ...(pattern === undefined
      ? []
      : [
          fc.stringMatching(new RegExp(pattern)),
          fc
            .tuple(fc.stringMatching(new RegExp(pattern)), fc.string({ minLength: 1, maxLength: 2 }))
            .map(([match, extra]) => match + extra),
        ]),
  ];
}

function queryValue(param: QueryParam, refused: boolean): fc.Arbitrary<string> {
  const words = param.words ? [fc.constantFrom(...param.words)] : [];
  const values: Record<QueryKind, fc.Arbitrary<string>[]> = {
    // Ids of a million and more exist nowhere: they reach the "not found" path.
    id: [
      ...words,
      fc.constantFrom(...ID_STRINGS),
      fc.integer({ min: 1_000_000, max: Number.MAX_SAFE_INTEGER }).map(String),
      ...(refused ? [] : [fc.integer({ min: 1, max: 5 }).map(String)]),
    ],
    page: [fc.constantFrom(...PAGE_STRINGS), fc.integer().map(String)],
    text: [...words, fc.string({ maxLength: 12 }), ...schemaText(param)],
  };
  return fc.oneof(encoded(fc.oneof(...values[param.kind])), encoded(unicodeText(24)), rawJunk);
}

/** Could this query name a real row in a parameter whose small ids must never be sent? As the URL parser reads it. */
function namesSmallId(query: string, refusedIds: Record<string, readonly string[]>): boolean {
  const params = new URL(`http://fuzz.test/?${query}`).searchParams;
  return Object.entries(refusedIds).some(([name, refusedAnyway]) =>
    params.getAll(name).some((value) => /^\s*\+?[1-9]\d{0,5}\s*$/.test(value) && !refusedAnyway.includes(value)),
  );
}

function queryRouteProperty(route: QueryRoute): FuzzProperty {
  const names = Object.keys(route.params);
  const entry = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .constantFrom(...names)
        .chain((name) =>
          queryValue(route.params[name]!, route.refusedIds?.[name] !== undefined).map((value) => `${name}=${value}`),
        ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.tuple(encoded(unicodeText(6)), rawJunk).map(([name, value]) => `${name}=${value}`) },
    { weight: 1, arbitrary: rawJunk },
  );
  const query = fc.array(entry, { maxLength: 5 }).map((entries) => entries.join("&"));
  const safeQuery = route.refusedIds ? query.filter((q) => !namesSmallId(q, route.refusedIds!)) : query;
  // POSTs that take their argument in the query get a junk body now and then; they must ignore it.
  const junkBody =
    route.method === "POST" && route.jsonBody === undefined
      ? fc.option(fc.tuple(unicodeText(200), fc.constantFrom(...NON_JSON_TYPES, JSON_TYPE)))
      : fc.constant(null);
  return {
    name: "random query strings: ids, pages, keys, broken percent-encoding, repeated and unknown parameters",
    run: (context) =>
      checkProperty(
        context,
        fc.tuple(safeQuery, junkBody),
        ([q, junk]) => {
          const request: FuzzRequest = {
            method: route.method,
            path: `${route.url ?? route.path}?${q}`,
            caller: route.caller,
            ...(route.headers ? { headers: route.headers() } : {}),
          };
          if (route.jsonBody !== undefined)
            Object.assign(request, { contentType: JSON_TYPE, body: toJson(route.jsonBody) });
          else if (junk) Object.assign(request, { body: junk[0], contentType: junk[1] });
          return { request, answers: route.answers };
        },
        50,
      ),
  };
}

/** A body over the limit, to any POST: 413 before anything runs. */
function oversizeProperty(route: { path: string; url?: string; caller: Caller }): FuzzProperty {
  return {
    name: "a body just over the limit: 413",
    run: (context) =>
      checkProperty(
        context,
        fc.record({ slack: fc.nat(64), chunked: fc.boolean(), type: fc.constantFrom(...NON_JSON_TYPES, JSON_TYPE) }),
        ({ slack, chunked, type }) => ({
          request: {
            method: "POST",
            path: route.url ?? route.path,
            caller: route.caller,
            contentType: type,
            body: "x".repeat(MAX_BODY_BYTES + 1 + slack),
            chunked,
          },
          answers: [413],
        }),
        3,
      ),
  };
}

function bodylessRouteProperty(route: BodylessRoute): FuzzProperty {
  return {
    name: "any body is ignored (the route takes no input; its effect is undone after each case)",
    run: async (context) => {
      const restore = await route.keep(context.fixture.db);
      await checkProperty(
        context,
        fc.tuple(
          fc.oneof(
            fc.jsonValue().map((v) => JSON.stringify(v)),
            unicodeText(200),
            fc.uint8Array({ maxLength: 256 }),
          ),
          fc.oneof(fc.constantFrom(...NON_JSON_TYPES, ...JSONISH_TYPES), headerText),
        ),
        ([body, type]) => ({
          request: { method: "POST", path: route.url ?? route.path, caller: route.caller, contentType: type, body },
          answers: route.answers ?? [200],
        }),
        10,
        restore,
      );
    },
  };
}

/** Any input route under another method: 405 with an Allow header naming the right one. */
function wrongMethodProperty(routes: { method: string; path: string; url?: string; caller: Caller }[]): FuzzProperty {
  return {
    name: "another method on an input route: 405",
    run: (context) =>
      checkProperty(
        context,
        fc
          .constantFrom(...routes)
          .chain((route) =>
            fc.tuple(
              fc.constant(route),
              fc.constantFrom(...["GET", "POST", "PUT", "DELETE", "PATCH"].filter((m) => m !== route.method)),
            ),
          ),
        ([route, method]) => ({
          request: {
            method,
            path: route.url ?? route.path,
            caller: route.caller,
            ...(method === "GET" ? {} : { contentType: JSON_TYPE, body: "{}" }),
          },
          answers: [405],
        }),
        20,
      ),
  };
}

/** Registers every property of one group's routes, on a fixture of its own; returns that fixture's context for the group's own tests. */
export function registerFuzzSuite(group: Group): () => FuzzContext {
  let context: FuzzContext;
  beforeAll(async () => {
    context = await startFuzzing();
  });
  afterAll(() => context?.fixture.close());

  const timeout = 120_000;
  for (const route of JSON_ROUTES.filter((r) => r.group === group)) {
    describe(`POST ${route.path} (JSON body, as ${route.caller})`, () => {
      for (const property of jsonRouteProperties(route)) it(property.name, () => property.run(context), timeout);
    });
  }
  for (const route of QUERY_ROUTES.filter((r) => r.group === group)) {
    describe(`${route.method} ${route.path} (query, as ${route.caller})`, () => {
      const property = queryRouteProperty(route);
      it(property.name, () => property.run(context), timeout);
      if (route.method === "POST" && route.jsonBody === undefined) {
        const oversize = oversizeProperty(route);
        it(oversize.name, () => oversize.run(context), timeout);
      }
    });
  }
  for (const route of BODYLESS_ROUTES.filter((r) => r.group === group)) {
    describe(`POST ${route.path} (no input, as ${route.caller})`, () => {
      for (const property of [bodylessRouteProperty(route), oversizeProperty(route)])
        it(property.name, () => property.run(context), timeout);
    });
  }
  const inputRoutes = [
    ...JSON_ROUTES.filter((r) => r.group === group).map((r) => ({ method: "POST", path: r.path, caller: r.caller })),
    ...QUERY_ROUTES.filter((r) => r.group === group),
  ];
  const methods = wrongMethodProperty(inputRoutes);
  it(methods.name, () => methods.run(context), timeout);
  return () => context;
}
