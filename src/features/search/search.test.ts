// Search in Node over index rows written directly (the permissions, keywords and paging the query
// applies), and the index admin routes over Virtual storages (the build in steps, its progress,
// stop, clear). The build over real S3 and WebDAV servers is search.workerd.test.ts.
import { eq, sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runBatch } from "../../db/plan.ts";
import { metas, searchGrams, searchNodes, searchQueue, settings, storages } from "../../db/schema.ts";
import { signInAdmin, signInMember } from "../../../test/support/auth.ts";
import {
  api,
  backgroundContext,
  createUnitFixture,
  type Envelope,
  testEnv,
  type UnitFixture,
} from "../../../test/support/unit.ts";
import { Permission } from "../fs/rules.ts";
import { keywordsOf, searchPatterns } from "./rules.ts";
import { runBuild } from "./build.ts";
import { clearIndex, copySubtree, deleteSubtree, finishStep, moveSubtree, startBuild, upsertEntries } from "./store.ts";

let fixture: UnitFixture;
let admin: string;

const { post } = api(
  () => fixture,
  () => admin,
);
const search = (body: Record<string, unknown>, auth = admin) => post("/api/fs/search", body, auth);
const names = (envelope: Envelope) => envelope.data.content.map((item: any) => `${item.parent}|${item.name}`);

async function setSetting(key: string, value: string) {
  await fixture.db.update(settings).set({ value }).where(eq(settings.key, key));
}

const READ = 0;
const KEYWORDS_REFUSED = {
  code: 400,
  message: "keywords must not contain control characters or unpaired surrogates",
  data: null,
};
const TREE = [
  ["/s", true],
  ["/s/docs", true],
  ["/s/docs/report-2026.pdf", false],
  ["/s/docs/report-2025.pdf", false],
  ["/s/docs/Ärger.txt", false],
  ["/s/docs/100%_done.txt", false],
  ["/s/docs/1000 done.txt", false],
  ["/s/docs/日本.txt", false],
  ["/s/pw", true],
  ["/s/pw/report-secret.txt", false],
  ["/s/pw/sub", true],
  ["/s/pw/sub/report-deep.txt", false],
  ["/s/hidden-dir", true],
  ["/s/hidden-dir/report-x.txt", false],
  ["/s/team", true],
  ["/s/team/report-team.txt", false],
  ["/s/team/.report-dot", false],
  ["/s/teamx", true],
  ["/s/teamx/report-teamx.txt", false],
] as const;

beforeAll(async () => {
  fixture = await createUnitFixture();
  admin = await signInAdmin(fixture);
});
afterAll(() => fixture.close());
beforeEach(async () => {
  await fixture.db.delete(metas);
  await fixture.db.delete(searchNodes);
  await fixture.db.delete(searchQueue);
  await fixture.db.delete(storages);
  await setSetting("search_index", "database");
  await setSetting("index_progress", "{}");
  await runBatch(
    fixture.db,
    upsertEntries(
      fixture.db,
      TREE.map(([path, isDir]) => ({ path, isDir, size: isDir ? 0 : 10 })),
    ),
  );
});

describe("/api/fs/search", () => {
  it("answers 500 `search not available` while search_index is none (AList's default)", async () => {
    await setSetting("search_index", "none");
    expect(await search({ keywords: "report" })).toEqual({ code: 500, message: "search not available", data: null });
  });

  it("finds substrings, every keyword (AND), with AList's item shape and an exact total", async () => {
    const found = await search({ keywords: "report 2026" });
    expect(found).toEqual({
      code: 200,
      message: "success",
      data: { content: [{ parent: "/s/docs", name: "report-2026.pdf", is_dir: false, size: 10, type: 0 }], total: 1 },
    });
    const all = await search({ keywords: "REPORT" });
    expect(all.data.total).toBe(8);
    expect(names(all)).toContain("/s/team|.report-dot");
  });

  it("folds case beyond ASCII, matches short keywords (two CJK characters) and takes % and _ literally", async () => {
    expect(names(await search({ keywords: "ärg" }))).toEqual(["/s/docs|Ärger.txt"]);
    expect(names(await search({ keywords: "är" }))).toEqual(["/s/docs|Ärger.txt"]);
    expect(names(await search({ keywords: "日本" }))).toEqual(["/s/docs|日本.txt"]);
    expect(names(await search({ keywords: "%" }))).toEqual(["/s/docs|100%_done.txt"]);
    expect(names(await search({ keywords: "_" }))).toEqual(["/s/docs|100%_done.txt"]);
    expect(names(await search({ keywords: "0%_d" }))).toEqual(["/s/docs|100%_done.txt"]);
  });

  it("counts keywords of one or two characters as they match: case folded, non-ASCII, at a name's end, literal", async () => {
    await runBatch(
      fixture.db,
      upsertEntries(fixture.db, [
        { path: "/s/docs/İzmir.txt", isDir: false, size: 1 },
        { path: "/s/docs/x", isDir: false, size: 1 },
      ]),
    );
    const all = [...TREE.map(([path]) => path), "/s/docs/İzmir.txt", "/s/docs/x"];
    const expected = (keywords: string, files = false) =>
      all
        .filter((path) => !files || !TREE.some(([p, isDir]) => p === path && isDir))
        .filter((path) => {
          const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
          return keywords.split(" ").every((word) => name.includes(word.toLowerCase()));
        }).length;
    for (const keywords of [
      "r",
      "R",
      "F",
      "x",
      "ä",
      "Ä",
      "日",
      "本",
      "日本",
      "xt",
      "DF",
      "%",
      "_",
      "0%",
      "İ",
      "İz",
      "re po",
      "report t",
      "s 日",
    ]) {
      // The admin's count comes from the postings alone; the files' count (scope 2) reads the nodes.
      const found = await search({ keywords, per_page: 1000 });
      expect(found.data.total, keywords).toBe(expected(keywords));
      expect(found.data.content, keywords).toHaveLength(expected(keywords));
      expect((await search({ keywords, scope: 2 })).data.total, keywords).toBe(expected(keywords, true));
    }
  });

  it("keeps the short keywords' postings in step with every write to the index, and empties them with it", async () => {
    const grams = async () =>
      (await fixture.db.select().from(searchGrams)).map((row) => `${row.gram}|${row.nodeId}`).sort();
    const expectedGrams = async () =>
      (await fixture.db.select({ id: searchNodes.id, folded: searchNodes.folded }).from(searchNodes))
        .flatMap(({ id, folded }) => {
          const chars = [...folded];
          const own = chars.slice(0, -1).map((c, i) => c + chars[i + 1]);
          return [...new Set([...own, chars.at(-1)!])].map((gram) => `${gram}|${id}`);
        })
        .sort();
    expect(await grams()).toEqual(await expectedGrams());
    await runBatch(fixture.db, [
      ...moveSubtree(fixture.db, "/s/docs", "/s/Écrits"),
      ...copySubtree(fixture.db, "/s/team", "/s/Équipe"),
      deleteSubtree(fixture.db, "/s/pw"),
    ]);
    expect(await grams()).toEqual(await expectedGrams());
    expect((await search({ keywords: "éc" })).data.total).toBe(1);
    expect((await search({ keywords: "q" })).data.total).toBe(1);
    await runBatch(fixture.db, clearIndex(fixture.db));
    expect(await grams()).toEqual([]);
  });

  it("limits to a parent (on a / boundary), a scope (folders, files), and pages with a constant total", async () => {
    expect(names(await search({ parent: "/s/team", keywords: "report" }))).toEqual([
      "/s/team|.report-dot",
      "/s/team|report-team.txt",
    ]);
    expect(names(await search({ keywords: "team", scope: 1 }))).toEqual(["/s|team", "/s|teamx"]);
    expect((await search({ keywords: "team", scope: 2 })).data.total).toBe(2);
    const pages = await Promise.all([1, 2, 3].map((page) => search({ keywords: "report", page, per_page: 3 })));
    expect(pages.map((p) => p.data.total)).toEqual([8, 8, 8]);
    expect(new Set(pages.flatMap(names)).size).toBe(8);
    expect(pages[2]!.data.content).toHaveLength(2);
    expect((await search({ keywords: "report", page: 4, per_page: 3 })).data).toEqual({ content: [], total: 8 });
  });

  it("refuses keywords holding a control character or a lone surrogate (400), never an internal error", async () => {
    for (const keywords of [
      "rep\u0000ort",
      "\u0000",
      "report\u0000",
      "re\u0001",
      "report\u001f",
      "\u007f",
      "\ud800report",
    ])
      expect(await search({ keywords }), JSON.stringify(keywords)).toEqual(KEYWORDS_REFUSED);
    // Tabs and line breaks are whitespace: they separate keywords, as spaces do.
    expect(names(await search({ keywords: "report\t2026\r\n" }))).toEqual(["/s/docs|report-2026.pdf"]);
  });

  it("answers any keyword text with a page or the clear refusal, never an internal error", async () => {
    const unit = fc.oneof(
      fc.constantFrom("\u0000", "\u0001", "\t", '"', "*", "%", "\\", "\ud800", "\udc00"),
      fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ unit, maxLength: 12 }), async (keywords) => {
        const reply = await search({ keywords });
        if (reply.code !== 200) expect(reply).toEqual(KEYWORDS_REFUSED);
      }),
      { numRuns: 30 },
    );
  });

  it("refuses what AList refuses: page < 1, a relative parent (400)", async () => {
    expect((await search({ keywords: "x", page: 0 })).code).toBe(400);
    expect(await search({ parent: "/s/../..", keywords: "x" })).toMatchObject({ code: 400 });
  });

  it("a role scoped to /s/team and a parent of /s/team end at a `/`: nothing of /s/team-x, /s/team.old, /s/team 2", async () => {
    // Byte order puts ` ` `-` `.` between `/s/team` and `/s/team/`: a bare prefix or range would take them in.
    const neighbours = ["/s/team-x", "/s/team.old", "/s/team 2"];
    await runBatch(
      fixture.db,
      upsertEntries(
        fixture.db,
        neighbours.flatMap((folder) => [
          { path: folder, isDir: true, size: 0 },
          { path: `${folder}/report-beside.txt`, isDir: false, size: 10 },
        ]),
      ),
    );
    const inTeam = ["/s/team|.report-dot", "/s/team|report-team.txt"];
    const user = await signInMember(fixture, "bounded", [{ path: "/s/team", permission: READ }]);
    expect(names(await search({ keywords: "report" }, user))).toEqual(inTeam);
    expect(names(await search({ keywords: "team" }, user))).toEqual(["/s/team|report-team.txt", "/s|team"]);
    expect(names(await search({ parent: "/s/team", keywords: "report" }))).toEqual(inTeam);
    expect((await search({ parent: "/s/team", keywords: "beside" })).data).toEqual({ content: [], total: 0 });
    // The neighbours are there for whoever may see them.
    expect((await search({ keywords: "beside" })).data.total).toBe(3);
  });

  it('takes a `"` inside a keyword literally, never as FTS5 syntax', async () => {
    await runBatch(
      fixture.db,
      upsertEntries(fixture.db, [{ path: '/s/docs/say "hi" OR "no".txt', isDir: false, size: 1 }]),
    );
    const quoted = ['/s/docs|say "hi" OR "no".txt'];
    expect(names(await search({ keywords: '"hi"' }))).toEqual(quoted);
    expect(names(await search({ keywords: 'y "hi" "no"' }))).toEqual(quoted);
    expect(names(await search({ keywords: '"' }))).toEqual(quoted);
    // As FTS5 syntax these would be `report OR 日本` and a phrase search for `hi`.
    expect((await search({ keywords: 'report"OR"日本' })).data).toEqual({ content: [], total: 0 });
    expect((await search({ keywords: 'report"+"2026' })).data).toEqual({ content: [], total: 0 });
  });

  it("a base-path user sees its part only, with parents relative to its base path", async () => {
    const user = await signInMember(fixture, "based", [{ path: "/", permission: READ }], { basePath: "/s/team" });
    const found = await search({ keywords: "report" }, user);
    expect(names(found)).toEqual(["/|.report-dot", "/|report-team.txt"]);
    expect(found.data.total).toBe(2);
  });

  it("a scoped role sees its scope and the folders on the way to it, nothing beside it", async () => {
    const user = await signInMember(fixture, "scoped", [{ path: "/s/team", permission: READ }]);
    expect(names(await search({ keywords: "team" }, user))).toEqual(["/s/team|report-team.txt", "/s|team"]);
    expect((await search({ keywords: "report" }, user)).data.total).toBe(2);
  });

  it("a meta password hides the folder and everything in it (p_sub or not) unless the password is given", async () => {
    await fixture.db.insert(metas).values({ path: "/s/pw", password: "open sesame", passwordSub: false });
    const user = await signInMember(fixture, "nopass", [{ path: "/", permission: READ }]);
    expect(names(await search({ keywords: "report" }, user))).not.toContain("/s/pw|report-secret.txt");
    expect((await search({ keywords: "report" }, user)).data.total).toBe(6);
    expect((await search({ keywords: "pw" }, user)).data.total).toBe(0);
    const given = await search({ keywords: "report", password: "open sesame" }, user);
    expect(given.data.total).toBe(8);
    // The skip-password bit opens it; the admin has it.
    expect((await search({ keywords: "report" })).data.total).toBe(8);
    const skipper = await signInMember(fixture, "skipper", [
      { path: "/", permission: Permission.ACCESS_WITHOUT_PASSWORD },
    ]);
    expect((await search({ keywords: "report" }, skipper)).data.total).toBe(8);
    // Searching inside the folder itself needs its password, as listing it does.
    expect((await search({ parent: "/s/pw", keywords: "report" }, user)).code).toBe(403);
  });

  it("a hidden folder hides its whole subtree from those without the see-hides bit; h_sub hides deeper names", async () => {
    await fixture.db.insert(metas).values({ path: "/s", hide: "^hidden", hideSub: false });
    const user = await signInMember(fixture, "nohides", [{ path: "/", permission: READ }]);
    const found = await search({ keywords: "report" }, user);
    expect(names(found)).not.toContain("/s/hidden-dir|report-x.txt");
    expect(found.data.total).toBe(7);
    expect((await search({ keywords: "hidden" }, user)).data.total).toBe(0);
    const seer = await signInMember(fixture, "seer", [{ path: "/", permission: Permission.SEE_HIDES }]);
    expect((await search({ keywords: "report" }, seer)).data.total).toBe(8);

    // Without h_sub the rule covers /s's own names only; with it, every name below (until a deeper meta).
    await fixture.db.update(metas).set({ hide: "^\\.", hideSub: false });
    expect(names(await search({ keywords: "report" }, user))).toContain("/s/team|.report-dot");
    await fixture.db.update(metas).set({ hideSub: true });
    expect(names(await search({ keywords: "report" }, user))).not.toContain("/s/team|.report-dot");
    await fixture.db.insert(metas).values({ path: "/s/team", readme: "a deeper meta, nearest below it" });
    expect(names(await search({ keywords: "report" }, user))).toContain("/s/team|.report-dot");
  });

  it("a hide line SQLite's REGEXP would read otherwise hides every name it covers (fail closed)", () => {
    expect(searchPatterns("^\\.\n(?=x)\n[bad\n\n")).toEqual(["^\\.", "\u0000unsafe"]);
    expect(keywordsOf("ab  c%d_e\\")).toEqual({ match: '"c%d_e\\"', likes: ["%ab%"], grams: ["ab"] });
    expect(keywordsOf("İx").grams).toBeNull();
  });
});

describe("/api/admin/index/*", () => {
  const ctxRequest = async (path: string, body: unknown = {}, auth = admin) => {
    const { ctx, pending } = backgroundContext();
    const response = await fixture.app.request(
      path,
      {
        method: path.endsWith("progress") ? "GET" : "POST",
        headers: { Authorization: auth, "Content-Type": "application/json" },
        ...(path.endsWith("progress") ? {} : { body: JSON.stringify(body) }),
      },
      testEnv,
      ctx,
    );
    const envelope = (await response.json()) as Envelope;
    await Promise.all(pending);
    return envelope;
  };

  it("builds over a storage in the background, reports progress, stops, clears; admins only", async () => {
    await fixture.db.delete(searchNodes);
    await fixture.db.insert(storages).values({
      mountPath: "/v",
      driver: "Virtual",
      status: "work",
      addition: JSON.stringify({ num_file: 4, num_folder: 3, min_file_size: 1, max_file_size: 9 }),
      modifiedAtMs: Date.UTC(2026, 2, 1),
    });
    await setSetting("max_index_depth", "3");
    expect(await ctxRequest("/api/admin/index/progress")).toEqual({
      code: 200,
      message: "success",
      data: { obj_count: 0, is_done: false, last_done_time: null, error: "" },
    });
    const member = await signInMember(fixture, "builder", [{ path: "/", permission: 0xffff }]);
    expect(await ctxRequest("/api/admin/index/build", {}, member)).toMatchObject({ code: 403 });
    expect(await ctxRequest("/api/admin/index/build")).toEqual({ code: 200, message: "success", data: null });
    const progress = (await ctxRequest("/api/admin/index/progress")).data;
    // Depth 3 lists three levels, `/` the first: /v, its 7 entries, 7 in each of its 3 folders.
    expect(progress).toMatchObject({ obj_count: 1 + 7 + 21, is_done: true, error: "" });
    expect(progress.last_done_time).toMatch(/^\d{4}-/);
    expect((await search({ keywords: "" })).data.total).toBe(29);
    expect(await ctxRequest("/api/admin/index/stop")).toEqual({
      code: 400,
      message: "index is not running",
      data: null,
    });

    // A running build (its queue not empty) refuses another and a clear; stop ends it.
    await fixture.db.insert(searchQueue).values({ path: "/v", depth: 2, leaseUntilMs: Date.now() + 60_000 });
    expect(await ctxRequest("/api/admin/index/build")).toEqual({ code: 400, message: "index is running", data: null });
    expect(await ctxRequest("/api/admin/index/clear")).toMatchObject({ code: 400, message: "index is running" });
    expect(await ctxRequest("/api/admin/index/stop")).toMatchObject({ code: 200 });
    expect(await fixture.db.select().from(searchQueue)).toEqual([]);

    expect(await ctxRequest("/api/admin/index/clear")).toMatchObject({ code: 200 });
    expect(await fixture.db.select().from(searchNodes)).toEqual([]);
    // Emptied whole (FTS5 'delete-all', the per-row trigger skipped), the trigram index is still sound.
    await fixture.db.run(sql`INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)`);
    await runBatch(fixture.db, upsertEntries(fixture.db, [{ path: "/again/found-again.txt", isDir: false, size: 1 }]));
    expect(names(await search({ keywords: "again" }))).toEqual(["/again|found-again.txt"]);
    expect((await ctxRequest("/api/admin/index/progress")).data).toEqual({
      obj_count: 0,
      is_done: true,
      last_done_time: null,
      error: "",
    });

    await setSetting("search_index", "none");
    expect(await ctxRequest("/api/admin/index/progress")).toMatchObject({ code: 500, message: "search not available" });
  });
});

describe("the build in steps", () => {
  const mountVirtual = (mountPath: string) =>
    fixture.db.insert(storages).values({
      mountPath,
      driver: "Virtual",
      status: "work",
      addition: JSON.stringify({ num_file: 2, num_folder: 1, min_file_size: 1, max_file_size: 9 }),
      modifiedAtMs: Date.UTC(2026, 2, 1),
    });

  it("goes on from the database: a step that died frees its folders when its lease ends, and the cron's run finishes", async () => {
    await fixture.db.delete(searchNodes);
    await mountVirtual("/v");
    await setSetting(
      "index_progress",
      JSON.stringify({ obj_count: 0, is_done: false, last_done_time: null, error: "" }),
    );
    // Claimed by a step that never finished (its lease ran out), as after a restart.
    await fixture.db.insert(searchQueue).values({ path: "/", depth: 2, leaseUntilMs: Date.now() - 1 });
    expect(await runBuild(fixture.db, 10_000)).toMatchObject({ steps: 2 });
    expect(await fixture.db.select().from(searchQueue)).toEqual([]);
    const [progress] = await fixture.db.select().from(settings).where(eq(settings.key, "index_progress"));
    expect(JSON.parse(progress!.value)).toMatchObject({ obj_count: 4, is_done: true, error: "" });
    expect((await search({ keywords: "" })).data.total).toBe(4);
  });

  it("writes nothing for folders whose claim a stop removed meanwhile", async () => {
    await fixture.db.delete(searchNodes);
    const lease = Date.now() + 60_000;
    await runBatch(
      fixture.db,
      finishStep(
        fixture.db,
        lease,
        [{ folder: "/a", entries: [{ path: "/a/x", isDir: true, size: 0 }], next: [{ path: "/a/x", depth: 1 }] }],
        "",
      ),
    );
    expect(await fixture.db.select().from(searchNodes)).toEqual([]);
    expect(await fixture.db.select().from(searchQueue)).toEqual([]);
  });

  it("skips ignore_paths as path rules (/v, not /vx) and records a folder that failed to list", async () => {
    await fixture.db.delete(searchNodes);
    await mountVirtual("/v");
    await mountVirtual("/vx");
    await fixture.db.insert(storages).values({
      mountPath: "/broken",
      driver: "S3",
      status: "work",
      addition: JSON.stringify({
        bucket: "b",
        endpoint: "http://127.0.0.1:1",
        access_key_id: "a",
        secret_access_key: "s",
      }),
      modifiedAtMs: Date.UTC(2026, 2, 1),
    });
    await setSetting("ignore_paths", "/v\n");
    await setSetting("max_index_depth", "2");
    await runBatch(fixture.db, startBuild(fixture.db, 2));
    await runBuild(fixture.db, 10_000);
    const paths = (await fixture.db.select({ path: searchNodes.path }).from(searchNodes)).map((row) => row.path);
    expect(paths.filter((path) => path.startsWith("/v/") || path === "/v")).toEqual([]);
    expect(paths.filter((path) => path.startsWith("/vx/"))).toHaveLength(3);
    const [progress] = await fixture.db.select().from(settings).where(eq(settings.key, "index_progress"));
    expect(JSON.parse(progress!.value).error).toMatch(/^failed to list \/broken: /);
    await setSetting("ignore_paths", "");
  });
});
