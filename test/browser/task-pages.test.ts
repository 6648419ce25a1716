// The web UI's task pages in a real browser against `npm start`: copy, offline-download and move
// tasks listed, a failure's error shown, retried and cancelled from the page.
import { randomBytes } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { DAV_ROOT, type RunningServer, startDownloads, startWebdav } from "../support/storage-servers.ts";
import { startGatedProxy } from "../support/gated-proxy.ts";
import {
  adminToken,
  api,
  blocked,
  DAV_BASIC,
  mountWebdav,
  page,
  putOnWebdav,
  server,
  signInWith,
  useWebUi,
  webdavStorage,
} from "./webui-fixture.ts";

useWebUi();

describe("the task pages of the web UI", () => {
  /** A task's state as the API gives it (-1: no such task). */
  const stateOf = async (token: string, kind: string, id: string) =>
    ((await api(`/api/task/${kind}/info?tid=${id}`, { method: "POST", headers: { Authorization: token } })).data
      ?.state as number) ?? -1;
  /** A task's row on a task page: by its title and a button only that row has in its state. */
  const row = (title: string, button: string) =>
    page
      .locator("div")
      .filter({ hasText: title })
      .filter({ has: page.getByRole("button", { name: button, exact: true }) })
      .last();

  it("lists copy and offline-download tasks, shows a failure's error, retries it and cancels a running download", async () => {
    const token = await adminToken();
    const headers = { Authorization: token, "Content-Type": "application/json" };
    const post = (path: string, body: unknown) => api(path, { method: "POST", headers, body: JSON.stringify(body) });
    // A download that never ends by itself: headers, then a trickle, until the test lets it go.
    const trickles = new Set<ServerResponse>();
    const slow = createServer((_req, res) => {
      trickles.add(res);
      res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": String(64 * 1024 * 1024) });
      const timer = setInterval(() => res.write(Buffer.alloc(1024, 1)), 100);
      res.once("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/endless.bin`;
    const source = await startWebdav();
    const target = await startWebdav();
    const downloads = await startDownloads();
    let replacement: (RunningServer & { url: string }) | undefined;
    try {
      for (const name of ["task-ok.txt", "task-fail.txt"])
        expect(
          (
            await fetch(`${source.url}${DAV_ROOT}/${name}`, {
              method: "PUT",
              headers: { Authorization: DAV_BASIC },
              body: `bytes of ${name}\n`,
            })
          ).ok,
        ).toBe(true);
      expect((await post("/api/admin/storage/create", webdavStorage("/tasksrc", source.url))).code).toBe(200);
      const created = await post("/api/admin/storage/create", webdavStorage("/taskdst", target.url));
      expect(created.code, created.message).toBe(200);
      const targetId = created.data.id as number;

      // One copy that succeeds (into the default R2 storage), one into a WebDAV server stopped before
      // it is asked for: the copy is accepted without reaching its target (overwrite: true, so no
      // check that the name is free), and its unit, run from the queue at once, fails.
      const ok = await post("/api/fs/copy", {
        src_dir: "/tasksrc",
        dst_dir: "/",
        names: ["task-ok.txt"],
        overwrite: true,
      });
      expect(ok.code, ok.message).toBe(200);
      expect(ok.data.tasks[0].name).toMatch(/^copy \[\/tasksrc]\(.*\/task-ok\.txt\) to \[\/]\(\/\)$/);
      await target.close();
      const failing = await post("/api/fs/copy", {
        src_dir: "/tasksrc",
        dst_dir: "/taskdst",
        names: ["task-fail.txt"],
        overwrite: true,
      });
      expect(failing.code, failing.message).toBe(200);
      const failingId = failing.data.tasks[0].id as string;
      await expect.poll(() => stateOf(token, "copy", ok.data.tasks[0].id), { timeout: 15_000 }).toBe(2);
      await expect.poll(() => stateOf(token, "copy", failingId), { timeout: 20_000 }).toBe(7);

      // The copy page, signed in as the admin: both tasks by the names the UI parses, their states, the error.
      await signInWith(token);
      await page.goto(`${server.origin}/@manage/tasks/copy`);
      await row("task-ok.txt", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });
      const failedRow = row("task-fail.txt", "Retry");
      await failedRow.getByText("Failed", { exact: true }).waitFor();
      await failedRow.getByRole("button", { name: "Expand", exact: true }).click();
      const error = (await api(`/api/task/copy/info?tid=${failingId}`, { method: "POST", headers })).data
        .error as string;
      expect(error).not.toBe("");
      await page.getByText(error, { exact: true }).first().waitFor();

      // The target is back: the UI's Retry runs the copy again, and it lands.
      replacement = await startWebdav();
      const mended = await post("/api/admin/storage/update", webdavStorage("/taskdst", replacement.url, targetId));
      expect(mended.code, mended.message).toBe(200);
      await failedRow.getByRole("button", { name: "Retry", exact: true }).click();
      await expect.poll(() => stateOf(token, "copy", failingId), { timeout: 20_000 }).toBe(2);
      expect(
        await (
          await fetch(`${replacement.url}${DAV_ROOT}/task-fail.txt`, { headers: { Authorization: DAV_BASIC } })
        ).text(),
      ).toBe("bytes of task-fail.txt\n");
      await page.reload();
      await row("task-fail.txt", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });

      // The offline download page: a finished download, and one still running that the UI's Cancel stops.
      const fetched = await post("/api/fs/add_offline_download", {
        urls: [`${downloads.url}/bytes/5000/fetched.bin`],
        path: "/",
        tool: "SimpleHttp",
        delete_policy: "delete_on_upload_succeed",
      });
      expect(fetched.code, fetched.message).toBe(200);
      const endless = await post("/api/fs/add_offline_download", {
        urls: [slowUrl],
        path: "/",
        tool: "SimpleHttp",
        delete_policy: "delete_on_upload_succeed",
      });
      expect(endless.code, endless.message).toBe(200);
      const endlessId = endless.data.tasks[0].id as string;
      await expect
        .poll(() => stateOf(token, "offline_download", fetched.data.tasks[0].id), { timeout: 15_000 })
        .toBe(2);
      await expect.poll(() => stateOf(token, "offline_download", endlessId), { timeout: 15_000 }).toBe(1);
      await page.goto(`${server.origin}/@manage/tasks/offline_download`);
      await row(`${downloads.url}/bytes/5000/fetched.bin`, "Delete")
        .getByText("Succeeded", { exact: true })
        .waitFor({ timeout: 15_000 });
      const running = row(slowUrl, "Cancel");
      await running.getByText("Running", { exact: true }).waitFor({ timeout: 15_000 });
      await running.getByRole("button", { name: "Cancel", exact: true }).click();
      await expect.poll(() => stateOf(token, "offline_download", endlessId), { timeout: 15_000 }).toBe(4);
      const done = await api("/api/task/offline_download/done", { headers });
      expect(done.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: endlessId, state: 4, error: "context canceled" })]),
      );
      await page.reload();
      await row(slowUrl, "Delete").getByText("Canceled", { exact: true }).waitFor({ timeout: 15_000 });
      expect(blocked).toEqual([]);
    } finally {
      for (const res of trickles) res.destroy();
      await new Promise((resolve) => slow.close(resolve));
      await Promise.all([source.close(), target.close(), downloads.close(), replacement?.close()]);
    }
  }, 90_000);

  it("lists move tasks, shows a failure's error, retries it and cancels a running move; a source goes only once it all arrived", async () => {
    const token = await adminToken();
    const headers = { Authorization: token, "Content-Type": "application/json" };
    const move = (srcDir: string, dstDir: string, name: string) =>
      api("/api/fs/move", {
        method: "POST",
        headers,
        body: JSON.stringify({ src_dir: srcDir, dst_dir: dstDir, names: [name], overwrite: true }),
      });
    /** A file's bytes read from a WebDAV test server itself (null: not there). */
    const davBytes = async (address: string, name: string) => {
      const response = await fetch(`${address}${DAV_ROOT}/${name}`, { headers: { Authorization: DAV_BASIC } });
      return response.ok ? Buffer.from(await response.arrayBuffer()) : null;
    };
    const files = {
      "move-ok.bin": randomBytes(20_000),
      "move-fail.bin": randomBytes(20_000),
      // At the slow source's 10 KiB a second, about 100 s: still running whenever the test cancels it.
      "move-slow.bin": randomBytes(1024 * 1024),
    };
    const source = await startWebdav();
    const target = await startWebdav();
    const outage = await startWebdav();
    // The failing target refuses writes and the slow source trickles at the test's word, not by a
    // race with the queue (a server stopped after the request may be too late or too early).
    const outageGate = await startGatedProxy(outage.url);
    const slowSource = await startGatedProxy(source.url);
    try {
      for (const [name, bytes] of Object.entries(files)) await putOnWebdav(source.url, name, bytes);
      await mountWebdav(token, "/movesrc", source.url);
      await mountWebdav(token, "/movedst", target.url);
      await mountWebdav(token, "/moveout", outageGate.url);
      await mountWebdav(token, "/moveslow", slowSource.url);

      // A move that succeeds: the bytes at the target, byte-exact, and the source gone.
      const ok = await move("/movesrc", "/movedst", "move-ok.bin");
      expect(ok.code, ok.message).toBe(200);
      expect(ok.data.tasks[0].name).toBe("move [/movesrc](/move-ok.bin) to [/movedst](/)");
      await expect.poll(() => stateOf(token, "move", ok.data.tasks[0].id), { timeout: 15_000 }).toBe(2);
      expect((await davBytes(target.url, "move-ok.bin"))?.equals(files["move-ok.bin"])).toBe(true);
      expect(await davBytes(source.url, "move-ok.bin")).toBeNull();

      // A move into a target that drops every write fails, and its source stays whole.
      outageGate.refuseWrites = true;
      const failing = await move("/movesrc", "/moveout", "move-fail.bin");
      expect(failing.code, failing.message).toBe(200);
      const failingId = failing.data.tasks[0].id as string;
      await expect.poll(() => stateOf(token, "move", failingId), { timeout: 20_000 }).toBe(7);
      expect((await davBytes(source.url, "move-fail.bin"))?.equals(files["move-fail.bin"])).toBe(true);

      // The move page, signed in as the admin: both tasks by the names the UI parses, their states, the error.
      await signInWith(token);
      await page.goto(`${server.origin}/@manage/tasks/move`);
      await row("move-ok.bin", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });
      const failedRow = row("move-fail.bin", "Retry");
      await failedRow.getByText("Failed", { exact: true }).waitFor();
      await failedRow.getByRole("button", { name: "Expand", exact: true }).click();
      const error = (await api(`/api/task/move/info?tid=${failingId}`, { method: "POST", headers })).data
        .error as string;
      expect(error).not.toBe("");
      await page.getByText(error, { exact: true }).first().waitFor();

      // The target takes writes again: the UI's Retry moves the file, its source removed only once
      // the target holds all of it.
      outageGate.refuseWrites = false;
      await failedRow.getByRole("button", { name: "Retry", exact: true }).click();
      await expect
        .poll(
          async () => {
            const state = await stateOf(token, "move", failingId);
            if ((await davBytes(source.url, "move-fail.bin")) === null)
              expect((await davBytes(outage.url, "move-fail.bin"))?.equals(files["move-fail.bin"])).toBe(true);
            return state;
          },
          { timeout: 20_000 },
        )
        .toBe(2);
      expect((await davBytes(outage.url, "move-fail.bin"))?.equals(files["move-fail.bin"])).toBe(true);
      expect(await davBytes(source.url, "move-fail.bin")).toBeNull();
      await page.reload();
      await row("move-fail.bin", "Delete").getByText("Succeeded", { exact: true }).waitFor({ timeout: 15_000 });

      // A move from a slow source, canceled from the page while it runs: canceled, the source whole,
      // nothing left at the target.
      slowSource.slowReads = true;
      const slow = await move("/moveslow", "/movedst", "move-slow.bin");
      expect(slow.code, slow.message).toBe(200);
      const slowId = slow.data.tasks[0].id as string;
      await expect.poll(() => stateOf(token, "move", slowId), { timeout: 15_000 }).toBe(1);
      const running = row("move-slow.bin", "Cancel");
      await running.getByText("Running", { exact: true }).waitFor({ timeout: 15_000 });
      await running.getByRole("button", { name: "Cancel", exact: true }).click();
      await expect.poll(() => stateOf(token, "move", slowId), { timeout: 15_000 }).toBe(4);
      expect((await api(`/api/task/move/info?tid=${slowId}`, { method: "POST", headers })).data).toMatchObject({
        state: 4,
        error: "context canceled",
      });
      expect((await davBytes(source.url, "move-slow.bin"))?.equals(files["move-slow.bin"])).toBe(true);
      await expect.poll(() => davBytes(target.url, "move-slow.bin"), { timeout: 10_000 }).toBeNull();
      await page.reload();
      await row("move-slow.bin", "Delete").getByText("Canceled", { exact: true }).waitFor({ timeout: 15_000 });
      expect(blocked).toEqual([]);
    } finally {
      await Promise.all([outageGate.close(), slowSource.close()]);
      await Promise.all([source.close(), target.close(), outage.close()]);
    }
  }, 90_000);
});
