// The driver group: the templates the storage form is built from (AList v3.58.0
// server/handles/driver.go, internal/op/driver.go:61).
import * as z from "zod/mini";
import { createRoute } from "../../http/openapi.ts";
import { adminOnly } from "../../auth/guard.ts";
import { allDrivers, driverInfo, driverNames } from "../../drivers/index.ts";
import { ok } from "../../http/envelope.ts";
import type { Router } from "../../http/router.ts";
import { templateDriver } from "./rules.ts";

const list = createRoute({
  method: "get",
  path: "/api/admin/driver/list",
  ...adminOnly,
});

const names = createRoute({
  method: "get",
  path: "/api/admin/driver/names",
  ...adminOnly,
});

const info = createRoute({
  method: "get",
  path: "/api/admin/driver/info",
  ...adminOnly,
  request: {
    query: z.object({ driver: z.string({ error: "is required" }).check(z.minLength(1, { error: "is required" })) }),
  },
});

export function registerDriverRoutes(app: Router) {
  app.openapi(list, (c) =>
    ok(c, Object.fromEntries(allDrivers().map((driver) => [driver.config.name, driverInfo(driver)]))),
  );

  app.openapi(names, (c) => ok(c, driverNames()));

  app.openapi(info, (c) => ok(c, driverInfo(templateDriver(c.req.valid("query").driver))));
}
