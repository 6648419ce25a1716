// The documentation of the sshkeys routes, joined to them by method and path: read by
// scripts/openapi.ts to build the OpenAPI document, never imported by the Worker.
import { envelopeResponse, type RouteDocs } from "../../http/docs.ts";
import * as z from "zod/mini";

const SshKey = z.object({
  id: z.number().check(z.int()),
  title: z.string(),
  fingerprint: z.string().openapi({ example: "SHA256:NmLCfiO0z3fX+xm9bHY/mv7o11XWrlXV0Ov/s9NqO9k" }),
  added_time: z.string().openapi({ description: "RFC 3339" }),
  last_used_time: z.string().openapi({ description: "RFC 3339" }),
});

const KeyPage = z.object({ content: z.array(SshKey), total: z.number().check(z.int()) });
export const routeDocs: RouteDocs = {
  "get /api/me/sshkey/list": {
    tags: ["sshkeys"],
    summary: "The caller's SSH public keys, by id (the key text is never returned)",
    responses: envelopeResponse(KeyPage, "A page of keys"),
  },
  "post /api/me/sshkey/add": {
    tags: ["sshkeys"],
    summary: "Add an OpenSSH public key (ed25519, rsa, ecdsa, and their sk- variants)",
    responses: envelopeResponse(z.null(), "Added"),
  },
  "post /api/me/sshkey/delete": {
    tags: ["sshkeys"],
    summary: "Delete one of the caller's keys",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
  "get /api/admin/user/sshkey/list": {
    tags: ["sshkeys", "admin"],
    summary: "A user's SSH public keys",
    responses: envelopeResponse(KeyPage, "A page of keys"),
  },
  "post /api/admin/user/sshkey/delete": {
    tags: ["sshkeys", "admin"],
    summary: "Delete anyone's key",
    responses: envelopeResponse(z.null(), "Deleted"),
  },
};
