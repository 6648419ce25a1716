// Every route's documentation, for scripts/openapi.ts: each feature's docs.ts, and the app's own
// /ping (src/app.ts). The Worker never imports this module or a docs.ts (src/http/docs.ts).
import { allDocs, type RouteDocs } from "./http/docs.ts";
import { routeDocs as accessKeys } from "./features/access-keys/docs.ts";
import { routeDocs as appPasswords } from "./features/app-passwords/docs.ts";
import { routeDocs as archive } from "./features/archive/docs.ts";
import { routeDocs as auth } from "./features/auth/docs.ts";
import { routeDocs as drivers } from "./features/drivers/docs.ts";
import { routeDocs as fs } from "./features/fs/docs.ts";
import { routeDocs as ldap } from "./features/ldap/docs.ts";
import { routeDocs as me } from "./features/me/docs.ts";
import { routeDocs as messenger } from "./features/messenger/docs.ts";
import { routeDocs as metas } from "./features/metas/docs.ts";
import { routeDocs as passkeys } from "./features/passkeys/docs.ts";
import { routeDocs as publicDocs } from "./features/public/docs.ts";
import { routeDocs as roles } from "./features/roles/docs.ts";
import { routeDocs as search } from "./features/search/docs.ts";
import { routeDocs as sessions } from "./features/sessions/docs.ts";
import { routeDocs as settings } from "./features/settings/docs.ts";
import { routeDocs as shares } from "./features/shares/docs.ts";
import { routeDocs as sshkeys } from "./features/sshkeys/docs.ts";
import { routeDocs as sso } from "./features/sso/docs.ts";
import { routeDocs as storages } from "./features/storages/docs.ts";
import { routeDocs as tasks } from "./features/tasks/docs.ts";
import { routeDocs as torrent } from "./features/torrent/docs.ts";
import { routeDocs as twoFactor } from "./features/two-factor/docs.ts";
import { routeDocs as uploads } from "./features/uploads/docs.ts";
import { routeDocs as users } from "./features/users/docs.ts";

const app: RouteDocs = {
  "get /ping": {
    tags: ["public"],
    summary: "Liveness probe (any method): plain text `pong`, no database work",
    responses: {
      200: { description: "pong", content: { "text/plain": { schema: { type: "string", example: "pong" } } } },
    },
  },
};

export const routeDocs = allDocs([
  app,
  accessKeys,
  appPasswords,
  archive,
  auth,
  drivers,
  fs,
  ldap,
  me,
  messenger,
  metas,
  passkeys,
  publicDocs,
  roles,
  search,
  sessions,
  settings,
  shares,
  sshkeys,
  sso,
  storages,
  tasks,
  torrent,
  twoFactor,
  uploads,
  users,
]);
