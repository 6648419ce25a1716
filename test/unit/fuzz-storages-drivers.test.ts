// Property-based input fuzzing (test/support/fuzz.ts) of storages and driver templates. Every
// create and update is refused before a driver check (a taken mount path, an unknown driver, an id
// that does not exist), so no case reaches a server.
import { expect, it } from "vitest";
import { postJson } from "../support/auth.ts";
import { EXISTING_MOUNT, MISSING_ID, registerFuzzSuite, snapshot } from "../support/fuzz.ts";

const context = registerFuzzSuite("storages-drivers");

// What the fuzzing found: Alias and Crypt read the storages mounted on every prefix of the paths
// they point into. A path of 30,000 segments took 19 s and gigabytes (200,000 ran out of memory),
// and 33,000 Alias lines bound more parameters than SQLite takes (500).
const deepPath = "/a".repeat(30_000);
const manyLines = Array.from({ length: 40_000 }, (_, i) => `/p${i}`).join("\n");
const pointing = [
  { driver: "Crypt", addition: JSON.stringify({ remote_path: deepPath, password: "x" }) },
  { driver: "Alias", addition: JSON.stringify({ paths: deepPath }) },
  { driver: "Alias", addition: JSON.stringify({ paths: manyLines }) },
];

it("refuses an update or a create with a very deep or very long Alias/Crypt path in time, saving nothing", async () => {
  const { fixture, tokens } = context();
  const before = await snapshot(fixture.db);
  for (const body of pointing) {
    for (const [path, extra, expected] of [
      ["update", { id: MISSING_ID, mount_path: "/fuzz-new" }, { code: 404, message: "storage not found", data: null }],
      [
        "create",
        { mount_path: EXISTING_MOUNT },
        { code: 400, message: `mount path ${EXISTING_MOUNT} is already used`, data: null },
      ],
    ] as const) {
      const started = performance.now();
      const reply = await (
        await postJson(fixture, `/api/admin/storage/${path}`, { ...body, ...extra }, { Authorization: tokens.admin })
      ).json();
      expect(reply, `${path} ${body.driver}`).toEqual(expected);
      expect(performance.now() - started, `${path} ${body.driver}`).toBeLessThan(2_000);
    }
  }
  expect(await snapshot(fixture.db)).toEqual(before);
}, 60_000);
