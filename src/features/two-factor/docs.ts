// The documentation of the two-factor routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

export const routeDocs: RouteDocs = {
  "post /api/auth/2fa/generate": {
    tags: ["auth"],
    summary: "Start two-factor enrolment: a new TOTP secret and its QR code, valid for 10 minutes",
    responses: envelopeResponse(
      z.object({ qr: z.string(), secret: z.string() }),
      "The secret and an SVG QR code as a data URL",
    ),
  },
  "post /api/auth/2fa/verify": {
    tags: ["auth"],
    summary: "Finish two-factor enrolment with a code from the authenticator",
    responses: envelopeResponse(z.null(), "Two-factor authentication is on"),
  },
};
