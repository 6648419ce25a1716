// The typed router every feature builds on, and the schema helpers that keep its OpenAPI
// document in step with what the handlers validate and return.
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";

export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    // Input that fails its schema never reaches a handler: code 400 naming each field.
    defaultHook: (result) => {
      if (!result.success) throw new ApiError(400, describeIssues(result.error, result.target));
    },
  });
}

export type Router = ReturnType<typeof createRouter>;

/** `username: Invalid input: expected string, received number; password: …` */
export function describeIssues(error: ZodError, target: string): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : target}: ${issue.message}`)
    .join("; ");
}

/** A route's required JSON body: `request: { body: jsonBody(schema) }`. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { content: { "application/json": { schema } }, required: true } as const;
}

/** The `{code, message, data}` envelope around a payload schema. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ code: z.number().int().openapi({ example: 200 }), message: z.string().openapi({ example: "success" }), data });
}

/** A route's one documented response: always HTTP 200 with the envelope (failures included). */
export function envelopeResponse<T extends z.ZodType>(data: T, description: string) {
  return {
    200: {
      description: `${description}. Failures use the same envelope with another code and data null.`,
      content: { "application/json": { schema: envelopeOf(data) } },
    },
  } as const;
}
