// The driver group: the templates the storage form is built from (AList v3.58.0
// server/handles/driver.go, internal/op/driver.go:61).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly } from "../../auth/guard.ts";
import { allDrivers, driverInfo, driverNames } from "../../drivers/index.ts";
import { ok } from "../../http/envelope.ts";
import { envelopeResponse, type Router } from "../../http/router.ts";
import { templateDriver } from "./rules.ts";

const DriverItem = z
  .object({
    name: z.string(),
    type: z.enum(["string", "number", "text", "select", "bool"]),
    default: z.string(),
    options: z.string().openapi({ description: "comma-separated choices of a select" }),
    required: z.boolean(),
    help: z.string(),
  })
  .openapi("DriverItem");

const DriverInfo = z
  .object({
    common: z.array(DriverItem),
    additional: z.array(DriverItem),
    config: z.object({
      name: z.string(),
      local_sort: z.boolean(),
      only_local: z.boolean(),
      only_proxy: z.boolean(),
      no_cache: z.boolean(),
      no_upload: z.boolean(),
      need_ms: z.boolean(),
      default_root: z.string(),
      alert: z.string(),
    }),
  })
  .openapi("DriverInfo");

const list = createRoute({
  method: "get",
  path: "/api/admin/driver/list",
  tags: ["drivers"],
  summary: "Every driver's template, by driver name",
  ...adminOnly,
  responses: envelopeResponse(z.record(z.string(), DriverInfo), "Templates by driver name"),
});

const names = createRoute({
  method: "get",
  path: "/api/admin/driver/names",
  tags: ["drivers"],
  summary: "The driver names, in alphabetical order",
  ...adminOnly,
  responses: envelopeResponse(z.array(z.string()), "Driver names"),
});

const info = createRoute({
  method: "get",
  path: "/api/admin/driver/info",
  tags: ["drivers"],
  summary: "One driver's template; an unknown driver gets code 404",
  ...adminOnly,
  request: {
    query: z.object({ driver: z.string({ error: "is required" }).check(z.minLength(1, { error: "is required" })) }),
  },
  responses: envelopeResponse(DriverInfo, "The template"),
});

export function registerDriverRoutes(app: Router) {
  app.openapi(list, (c) =>
    ok(c, Object.fromEntries(allDrivers().map((driver) => [driver.config.name, driverInfo(driver)]))),
  );

  app.openapi(names, (c) => ok(c, driverNames()));

  app.openapi(info, (c) => ok(c, driverInfo(templateDriver(c.req.valid("query").driver))));
}
