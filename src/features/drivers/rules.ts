// Which driver template the admin may read (AList v3.58.0 server/handles/driver.go:19): an unknown
// driver is a 404. The decision takes the name and returns the driver or throws the refusal
// (ApiError) the wire answers. The drivers feature reads no rows, so it has no store.ts; its one
// text, `driverNotFound`, is the driver registry's (src/drivers/index.ts), shared with the storage
// routes.
import { driverNotFound, findDriver } from "../../drivers/index.ts";
import type { Driver } from "../../drivers/types.ts";
import { ApiError } from "../../http/errors.ts";

/** The driver of that name, for its template. */
export function templateDriver(name: string): Driver {
  const driver = findDriver(name);
  if (!driver) throw new ApiError(404, driverNotFound(name));
  return driver;
}
