// The typed router every feature builds on, and the request-body helper its routes validate with.
//
// `app.openapi(route, handler)` validates a route's input with zod as @hono/zod-openapi's
// OpenAPIHono does (same targets, same media-type gate, same order), on plain Hono: the document
// generator (@asteasolutions/zod-to-openapi) is not in the Worker. The route definitions are
// recorded instead (method, path, security, request schemas), and scripts/openapi.ts joins them to
// the features' docs.ts (summaries, responses) into the document GET /api/openapi.json serves from
// the assets folder (src/app.ts).
import type { Context, MiddlewareHandler } from "hono";
import { HonoBase } from "hono/hono-base";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { HTTPException } from "hono/http-exception";
import { validator } from "hono/validator";
import * as z from "zod/mini";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";
import en from "zod/v4/locales/en.js";
import type { RouteConfig, RouteHandler, Schema } from "./openapi.ts";

// zod/mini loads no messages of its own; the 400 replies name the problem in English, as before.
z.config(en());

/** What the document is built from: a route (`registerPath`) or a component (`registerComponent`). */
export type OpenApiDefinition =
  | { type: "route"; route: Omit<RouteConfig, "middleware" | "hide"> }
  | { type: "component"; componentType: string; name: string; component: unknown };

/** Records what OpenAPIRegistry would hold, for scripts/openapi.ts to hand to the generator. */
class DefinitionRecorder {
  readonly definitions: OpenApiDefinition[] = [];
  registerPath(route: Omit<RouteConfig, "middleware" | "hide">): void {
    this.definitions.push({ type: "route", route });
  }
  registerComponent(componentType: string, name: string, component: unknown): void {
    this.definitions.push({ type: "component", componentType, name, component });
  }
}

type Target = "query" | "param" | "header" | "cookie" | "json" | "form";

// One router, RegExpRouter (Hono's fastest matcher, which every path here fits), instead of Hono's
// default that carries a second router as a fallback for patterns this app does not use.
export class Router extends HonoBase<AppEnv> {
  readonly openAPIRegistry = new DefinitionRecorder();

  constructor() {
    super({ router: new RegExpRouter() });
  }

  /** Registers `route` on its method and path: its middleware, then its input validators, then `handler`. */
  openapi<R extends RouteConfig>(routeWithMiddleware: R, handler: RouteHandler<R>): this {
    const { middleware: routeMiddleware, hide, ...route } = routeWithMiddleware;
    if (!hide) this.openAPIRegistry.registerPath(route);
    const validators: MiddlewareHandler<AppEnv>[] = [];
    const request = route.request;
    if (request?.query) validators.push(zValidator("query", request.query));
    if (request?.params) validators.push(zValidator("param", request.params));
    if (request?.headers) validators.push(zValidator("header", request.headers));
    if (request?.cookies) validators.push(zValidator("cookie", request.cookies));
    const bodyContent = request?.body?.content;
    if (bodyContent) {
      const declaredMediaTypes = Object.keys(bodyContent);
      const validatesBody = declaredMediaTypes.some(
        (mediaType) =>
          isZod(schemaOf(bodyContent[mediaType])) && (isJSONContentType(mediaType) || isFormContentType(mediaType)),
      );
      if (validatesBody) {
        validators.push(async (c, next) => {
          const contentType = c.req.header("content-type");
          if (contentType) {
            if (!declaredMediaTypes.some((mediaType) => matchesMediaType(contentType, mediaType))) {
              throw new HTTPException(415, { message: "Unsupported Media Type" });
            }
          } else if (await hasRequestBody(c)) {
            throw new HTTPException(415, { message: "Unsupported Media Type" });
          }
          await next();
        });
      }
      for (const mediaType of declaredMediaTypes) {
        const schema = schemaOf(bodyContent[mediaType]);
        if (!isZod(schema)) continue;
        for (const [target, matches] of [
          ["json", isJSONContentType],
          ["form", isFormContentType],
        ] as const) {
          if (!matches(mediaType)) continue;
          const validate = zValidator(target, schema);
          if (request?.body?.required) {
            validators.push(validate);
          } else {
            validators.push(async (c, next) => {
              const contentType = c.req.header("content-type");
              if (contentType && matches(contentType)) return validate(c, next);
              c.req.addValidatedData(target, {});
              await next();
            });
          }
        }
      }
    }
    const middleware = routeMiddleware ? (Array.isArray(routeMiddleware) ? routeMiddleware : [routeMiddleware]) : [];
    this.on(
      [route.method],
      [route.path.replaceAll(/\/{(.+?)}/g, "/:$1")],
      ...(middleware as MiddlewareHandler<AppEnv>[]),
      ...validators,
      handler as MiddlewareHandler<AppEnv>,
    );
    return this;
  }
}

export function createRouter(): Router {
  return new Router();
}

/** Input that fails its schema never reaches a handler: code 400 naming each field. */
function zValidator(target: Target, schema: Schema): MiddlewareHandler<AppEnv> {
  // Header names arrive in lower case; the schema (an object) may spell them otherwise.
  const headerKeys =
    target === "header"
      ? new Map(Object.keys((schema as z.ZodMiniObject).shape).map((key) => [key.toLowerCase(), key]))
      : undefined;
  if (target === "json") return jsonValidator(schema);
  return validator(target, async (value: Record<string, unknown>) => {
    const input = headerKeys
      ? Object.fromEntries(Object.entries(value).map(([key, v]) => [headerKeys.get(key) ?? key, v]))
      : value;
    const result = await z.safeParseAsync(schema, input);
    if (!result.success) throw new ApiError(400, describeIssues(result.error, target));
    return result.data;
  }) as MiddlewareHandler<AppEnv>;
}

/**
 * Hono's `validator("json", …)` with zod, as above, except that a body a route's plan already
 * parsed with this schema (http/params.ts `fromJson`, from the same cached text) is taken as the
 * plan's parse left it: neither JSON.parse nor zod runs twice (docs/decisions.md D26.7).
 */
function jsonValidator(schema: Schema): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let value: unknown = {};
    const contentType = c.req.header("Content-Type");
    // Hono's test: the media type alone, application/json or application/<suffix>+json.
    if (contentType && honoJsonMediaType.test(contentType.split(";")[0]!.trim().toLowerCase())) {
      const parsed = c.var.parsedJson;
      if (parsed?.schema === schema) {
        c.req.addValidatedData("json", parsed.data as object);
        return next();
      }
      try {
        value = await c.req.json();
      } catch {
        throw new HTTPException(400, { message: "Malformed JSON in request body" });
      }
    }
    const result = await z.safeParseAsync(schema, value);
    if (!result.success) throw new ApiError(400, describeIssues(result.error, "json"));
    c.req.addValidatedData("json", result.data as object);
    return next();
  };
}
const honoJsonMediaType = /^application\/([\w.-]+\+)?json$/i;

/** A media type's schema; a `$ref` object has none to validate with. */
function schemaOf(media: object | undefined): unknown {
  return media && "schema" in media ? media.schema : undefined;
}

function isZod(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && "_zod" in value;
}

function isJSONContentType(contentType: string): boolean {
  return /^application\/([a-z-.]+\+)?json/i.test(contentType);
}

function isFormContentType(contentType: string): boolean {
  const lower = contentType.toLowerCase();
  return lower.startsWith("multipart/form-data") || lower.startsWith("application/x-www-form-urlencoded");
}

const jsonRequest = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;
const multipartRequest = /^multipart\/form-data(;\s?boundary=[a-zA-Z0-9'"()+_,\-./:=?]+)?$/i;
const urlencodedRequest = /^application\/x-www-form-urlencoded(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

function matchesMediaType(contentType: string, mediaType: string): boolean {
  if (mediaType === "*/*") return true;
  if (isJSONContentType(mediaType)) return jsonRequest.test(contentType);
  if (isFormContentType(mediaType)) return multipartRequest.test(contentType) || urlencodedRequest.test(contentType);
  const essence = contentType.split(";")[0]!.trim().toLowerCase();
  if (mediaType.endsWith("/*")) return essence.startsWith(mediaType.slice(0, -1).toLowerCase());
  return essence === mediaType.toLowerCase();
}

/** A body without a content type is refused only when it has bytes. */
async function hasRequestBody(c: Context<AppEnv>): Promise<boolean> {
  const raw = c.req.raw;
  if (raw.body === null) return false;
  if (raw.bodyUsed) return (await c.req.arrayBuffer()).byteLength > 0;
  const body = raw.clone().body;
  if (body === null) return false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) return true;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** `username: Invalid input: expected string, received number; password: …` */
function describeIssues(error: z.core.$ZodError, target: string): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : target}: ${issue.message}`)
    .join("; ");
}

/** A route's required JSON body: `request: { body: jsonBody(schema) }`. */
export function jsonBody<T extends Schema>(schema: T) {
  return { content: { "application/json": { schema } }, required: true } as const;
}
