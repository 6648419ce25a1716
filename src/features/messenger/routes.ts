// The web UI's messenger page (admin only; OpenList server/router.go's /admin/message group). In
// OpenList a running command-line process (the storage driver's QR sign-in and the like) posts
// messages to the web UI and waits for its answers. Gatehouse has no such process: the inbox is
// always empty, answered as OpenList answers an empty inbox, and sending is refused with the reason
// (docs/decisions.md D18.2).
import * as z from "zod/mini";
import { adminOnly } from "../../auth/guard.ts";
import { ApiError } from "../../http/errors.ts";
import { createRoute } from "../../http/openapi.ts";
import { jsonBody, type Router } from "../../http/router.ts";
import { NO_MESSAGE, SEND_REFUSED } from "./messages.ts";

const get = createRoute({
  method: "post",
  path: "/api/admin/message/get",
  ...adminOnly,
});

const send = createRoute({
  method: "post",
  path: "/api/admin/message/send",
  ...adminOnly,
  request: { body: jsonBody(z.object({ message: z._default(z.string().check(z.maxLength(65_536)), "") })) },
});

export function registerMessengerRoutes(app: Router) {
  app.openapi(get, () => {
    throw new ApiError(404, NO_MESSAGE);
  });
  app.openapi(send, () => {
    throw new ApiError(400, SEND_REFUSED);
  });
}
