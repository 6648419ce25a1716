// Every route's database round trips in one table, as the admin calls it with a login token: the
// request of the authorization matrix (it gets past the guard and changes nothing, so most of these
// are refusals past the guard: a missing id, an invalid body). A route whose count grows fails
// here, whatever test covers its behaviour; the feature tests assert the counts of the happy paths.
// 0: no database at all; 1: the guard and the route's reads in one batch; 2: a write after them.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ROUTES, routeKey } from "../support/authorization-matrix.ts";
import { roundTrips } from "../support/libsql-http.ts";
import { signIn } from "../support/workerd-client.ts";

const BUDGET: Record<string, number> = {
  "ALL /ping": 0,
  "GET /api/openapi.json": 0,
  // Kept by the isolate for a few seconds after the first read.
  "GET /api/public/settings": 1,
  "GET /api/public/archive_extensions": 0,
  "GET /api/public/offline_download_tools": 0,
  // An empty body is refused before any credential check.
  "POST /api/auth/login": 0,
  "POST /api/auth/login/hash": 0,
  "POST /api/auth/login/ldap": 0,
  // The settings, then nothing (single sign-on is off); a callback without a state reads nothing.
  "GET /api/auth/sso": 1,
  "GET /api/auth/sso_callback": 0,
  "GET /api/auth/sso_get_token": 0,
  "GET /api/auth/get_sso_id": 0,
  "GET /api/me": 1,
  "GET /api/me/sessions": 1,
  "POST /api/me/sessions/evict": 2,
  "POST /api/auth/2fa/generate": 2,
  "POST /api/auth/2fa/verify": 2,
  "POST /api/me/update": 2,
  // Passkeys with webauthn_login_enabled off: the guard, then the begin's conditional insert or the read.
  "GET /api/authn/webauthn_begin_registration": 2,
  "POST /api/authn/webauthn_finish_registration": 1,
  "GET /api/authn/webauthn_begin_login": 1,
  "POST /api/authn/webauthn_finish_login": 0,
  "GET /api/authn/getcredentials": 2,
  "POST /api/authn/delete_authn": 1,
  "GET /api/me/sshkey/list": 1,
  "POST /api/me/sshkey/add": 1,
  "POST /api/me/sshkey/delete": 2,
  "GET /api/me/app_password/list": 1,
  "POST /api/me/app_password/create": 2,
  "POST /api/me/app_password/delete": 2,
  "GET /api/me/access_key/list": 1,
  // An empty body: the guard only.
  "POST /api/me/access_key/create": 1,
  "POST /api/me/access_key/delete": 2,
  "GET /api/admin/access_key/list": 1,
  "POST /api/admin/access_key/delete": 2,
  "GET /api/admin/session/list": 1,
  "POST /api/admin/session/evict": 2,
  "GET /api/admin/setting/list": 1,
  "GET /api/admin/setting/get": 1,
  "POST /api/admin/setting/save": 1,
  "POST /api/admin/setting/delete": 2,
  "POST /api/admin/setting/reset_token": 2,
  "POST /api/admin/setting/set_token": 1,
  "POST /api/admin/setting/set_aria2": 1,
  "POST /api/admin/setting/set_qbit": 1,
  // Refused before any write: the guard only.
  "POST /api/admin/setting/set_transmission": 1,
  // The guard and the group's rows in one batch; nothing written.
  "POST /api/admin/setting/default": 1,
  "POST /api/admin/setting/set_115": 1,
  "POST /api/admin/setting/set_115_open": 1,
  "POST /api/admin/setting/set_123_pan": 1,
  "POST /api/admin/setting/set_123_open": 1,
  "POST /api/admin/setting/set_pikpak": 1,
  "POST /api/admin/setting/set_thunder": 1,
  "POST /api/admin/setting/set_thunder_browser": 1,
  "POST /api/admin/setting/set_thunderx": 1,
  "POST /api/admin/setting/set_guangyapan": 1,
  "POST /api/admin/message/get": 1,
  "POST /api/admin/message/send": 1,
  "GET /api/admin/user/sshkey/list": 1,
  "POST /api/admin/user/sshkey/delete": 2,
  "GET /api/admin/user/list": 1,
  "GET /api/admin/user/get": 1,
  "POST /api/admin/user/create": 1,
  "POST /api/admin/user/update": 2,
  "POST /api/admin/user/delete": 2,
  "POST /api/admin/user/cancel_2fa": 2,
  "POST /api/admin/user/del_cache": 1,
  "GET /api/admin/role/list": 1,
  "GET /api/admin/role/get": 1,
  "POST /api/admin/role/create": 1,
  "POST /api/admin/role/update": 2,
  "POST /api/admin/role/delete": 2,
  "GET /api/admin/driver/list": 1,
  "GET /api/admin/driver/names": 1,
  "GET /api/admin/driver/info": 1,
  "GET /api/admin/storage/list": 1,
  "GET /api/admin/storage/get": 1,
  "POST /api/admin/storage/create": 1,
  "POST /api/admin/storage/update": 1,
  "POST /api/admin/storage/delete": 1,
  "POST /api/admin/storage/enable": 1,
  "POST /api/admin/storage/disable": 2,
  "POST /api/admin/storage/load_all": 2,
  "GET /api/admin/meta/list": 1,
  "GET /api/admin/meta/get": 1,
  "POST /api/admin/meta/create": 1,
  "POST /api/admin/meta/update": 1,
  "POST /api/admin/meta/delete": 2,
  "POST /api/fs/list": 1,
  "POST /api/fs/get": 1,
  "POST /api/fs/dirs": 1,
  "POST /api/fs/other": 1,
  // With an index: a second trip, the page and the count (src/features/search/store.ts searchPage).
  "POST /api/fs/search": 1,
  // The guard, the index settings and whether a build runs in one batch; a second trip to start,
  // stop or clear (then build and update run their steps after the reply).
  "POST /api/admin/index/build": 1,
  "POST /api/admin/index/update": 1,
  "POST /api/admin/index/stop": 1,
  "POST /api/admin/index/clear": 1,
  "GET /api/admin/index/progress": 1,
  // The same batch; a second trip to start or stop a scan.
  "POST /api/admin/scan/start": 1,
  "POST /api/admin/scan/stop": 1,
  "GET /api/admin/scan/progress": 1,
  // The guard only: the torrent is read in the Worker.
  "POST /api/fs/torrent/parse": 1,
  "POST /api/fs/torrent/rapid_upload": 1,
  "POST /api/fs/archive/meta": 1,
  "POST /api/fs/archive/list": 1,
  "POST /api/fs/archive/decompress": 1,
  "POST /api/fs/mkdir": 1,
  "POST /api/fs/add_offline_download": 1,
  "POST /api/fs/rename": 1,
  "POST /api/fs/move": 1,
  "POST /api/fs/copy": 1,
  "POST /api/fs/remove": 1,
  "POST /api/fs/link": 1,
  "POST /api/fs/batch_rename": 1,
  "POST /api/fs/regex_rename": 1,
  "POST /api/fs/recursive_move": 1,
  "POST /api/fs/remove_empty_directory": 1,
  "PUT /api/fs/put": 1,
  "PUT /api/fs/form": 1,
  "POST /api/fs/multipart/init": 1,
  "PUT /api/fs/multipart/chunk": 1,
  "GET /api/fs/multipart/status": 1,
  "POST /api/fs/multipart/complete": 1,
  "POST /api/fs/multipart/abort": 1,
  "POST /api/fs/get_direct_upload_info": 1,
  "GET /api/task/:kind/undone": 1,
  "GET /api/task/:kind/done": 1,
  // The guard, then the task's one batch.
  "POST /api/task/:kind/info": 2,
  "POST /api/task/:kind/cancel": 2,
  "POST /api/task/:kind/delete": 2,
  // The guard, then the tasks named with their creators as they stand now (a task found and
  // allowed: its retry's write, one more).
  "POST /api/task/:kind/retry": 2,
  // No ids: the guard only.
  "POST /api/task/:kind/cancel_some": 1,
  "POST /api/task/:kind/delete_some": 1,
  "POST /api/task/:kind/retry_some": 1,
  "POST /api/task/:kind/clear_done": 2,
  "POST /api/task/:kind/clear_succeeded": 2,
  // The guard, then the failed tasks with their creators (none failed here: nothing to write).
  "POST /api/task/:kind/retry_failed": 2,
  "GET /api/admin/task/:kind/undone": 1,
  "GET /api/admin/task/:kind/done": 1,
  // The guard, then the task's one batch.
  "POST /api/admin/task/:kind/info": 2,
  "POST /api/admin/task/:kind/cancel": 2,
  "POST /api/admin/task/:kind/delete": 2,
  // The guard, then the tasks named with their creators as they stand now (a task found and
  // allowed: its retry's write, one more).
  "POST /api/admin/task/:kind/retry": 2,
  // No ids: the guard only.
  "POST /api/admin/task/:kind/cancel_some": 1,
  "POST /api/admin/task/:kind/delete_some": 1,
  "POST /api/admin/task/:kind/retry_some": 1,
  "POST /api/admin/task/:kind/clear_done": 2,
  "POST /api/admin/task/:kind/clear_succeeded": 2,
  // The guard, then the failed tasks with their creators (none failed here: nothing to write).
  "POST /api/admin/task/:kind/retry_failed": 2,
  "GET /d/:path{.+}": 1,
  "GET /p/:path{.+}": 1,
  "GET /ae/:path{.+}": 1,
  "GET /ad/:path{.+}": 1,
  "GET /ap/:path{.+}": 1,
  "GET /api/share/list": 1,
  "GET /api/share/get": 1,
  "POST /api/share/create": 1,
  "POST /api/share/update": 1,
  "POST /api/share/delete": 2,
  "POST /api/share/enable": 2,
  "POST /api/share/disable": 2,
  "GET /sd/:path{.+}": 1,
  "GET /sad/:path{.+}": 1,
};

let token: string;
beforeAll(async () => {
  token = await signIn("round-trips");
});

describe("database round trips per route", () => {
  // load_all answers at once and re-checks in the background: last, so its writes land in no other count.
  const background = (route: { path: string }) => route.path === "/api/admin/storage/load_all";
  const rows = ROUTES.filter((route) => !route.endsSession).sort(
    (a, b) => Number(background(a)) - Number(background(b)),
  );

  it("has a budget for every route of the matrix, and none for a route it lacks", () => {
    expect(Object.keys(BUDGET).sort()).toEqual(rows.map(routeKey).sort());
  });

  it.each(rows.map((route) => [routeKey(route), route] as const))("%s stays within its budget", async (key, route) => {
    const url = `http://gatehouse.test${route.url ?? route.path}${route.query ? `?${route.query}` : ""}`;
    const headers: Record<string, string> = {
      Authorization: token,
      ...(route.body === undefined ? {} : { "Content-Type": "application/json" }),
    };
    const counter = await roundTrips();
    const reply = await exports.default.fetch(
      new Request(url, {
        method: route.method === "ALL" ? "GET" : route.method,
        headers,
        ...(route.body === undefined ? {} : { body: JSON.stringify(route.body) }),
      }),
    );
    await reply.arrayBuffer();
    expect(await counter.count()).toBeLessThanOrEqual(BUDGET[key]!);
  });
});
