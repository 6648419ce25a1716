// Which hosts an offline download may reach (docs/decisions.md D15.9): every spelling of a loopback,
// private or link-local address is refused unless the deploy opts in, and the request that names one
// is refused before a task is written. The task's check of every redirect hop runs in workerd
// (tasks.workerd.test.ts, "offline download").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, signInAdmin } from "../../../test/support/auth.ts";
import { createUnitFixture, type UnitFixture } from "../../../test/support/unit.ts";
import { tasks } from "../../db/schema.ts";
import { downloadTargetAllowed, isPrivateHost, privateHostsOptIn } from "./rules.ts";

const none = privateHostsOptIn(undefined);
const allowed = (url: string, optIn = none) => downloadTargetAllowed(new URL(url), optIn);

const REFUSED = [
  // 127.0.0.1 in every spelling the URL parser takes
  "http://127.0.0.1/",
  "http://2130706433/",
  "http://0x7f.1/",
  "http://0x7f000001/",
  "http://127.1/",
  "http://0177.0.0.1/",
  "http://127.255.255.254:8787/",
  "http://localhost/",
  "http://LOCALHOST./",
  "http://gatehouse.localhost/",
  "http://0.0.0.0/",
  "http://0/",
  "http://[::1]/",
  "http://[0:0:0:0:0:0:0:1]/",
  "http://[::]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:7f00:1]/",
  "http://[::127.0.0.1]/",
  "http://[::ffff:0:127.0.0.1]/",
  "http://[64:ff9b::127.0.0.1]/",
  "http://[2002:7f00:1::]/",
  // private networks
  "http://10.0.0.1/",
  "http://10.255.255.255/",
  "http://172.16.0.1/",
  "http://172.31.255.255/",
  "http://192.168.1.1/",
  "http://100.64.0.1/",
  "http://[::ffff:192.168.0.1]/",
  "http://[fc00::1]/",
  "http://[fd12:3456::1]/",
  // link-local, metadata services, multicast, broadcast
  "http://169.254.169.254/latest/meta-data/",
  "http://0xa9.0xfe.0xa9.0xfe/",
  "http://[fe80::1]/",
  "http://[febf::1]/",
  "http://[fec0::1]/",
  "http://[ff02::1]/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
];
const PUBLIC = [
  "http://example.com/file.bin",
  "https://1.1.1.1/",
  "http://8.8.8.8:8080/",
  "http://172.15.255.255/",
  "http://172.32.0.1/",
  "http://192.169.0.1/",
  "http://169.255.0.1/",
  "http://100.128.0.1/",
  "http://[2606:4700:4700::1111]/",
  "http://[2001:db9::1]/",
  "http://localhost.example.com/",
  "http://mylocalhost/",
];

describe("the hosts an offline download may reach", () => {
  it.each(REFUSED)("refuses %s by default", (url) => {
    expect(isPrivateHost(new URL(url).hostname)).toBe(true);
    expect(allowed(url)).toBe(false);
  });

  it.each(PUBLIC)("lets %s through", (url) => expect(allowed(url)).toBe(true));

  it("refuses schemes other than http and https", () => {
    for (const url of ["ftp://example.com/x", "file:///etc/passwd", "data:text/plain,x"])
      expect(allowed(url), url).toBe(false);
  });

  it("OFFLINE_DOWNLOAD_PRIVATE_HOSTS opts in: `*` every private host; a list, those hosts in any spelling", () => {
    const all = privateHostsOptIn(" * ");
    for (const url of REFUSED) expect(allowed(url, all), url).toBe(true);
    const list = privateHostsOptIn("127.0.0.1, [::1],192.168.1.20");
    for (const url of [
      "http://127.0.0.1:9000/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://[::1]/",
      "http://192.168.1.20/",
    ])
      expect(allowed(url, list), url).toBe(true);
    for (const url of [
      "http://localhost/",
      "http://127.0.0.2/",
      "http://[::ffff:127.0.0.1]/",
      "http://169.254.169.254/",
    ])
      expect(allowed(url, list), url).toBe(false);
    for (const raw of ["", " , ", "not a host!"])
      expect(allowed("http://127.0.0.1/", privateHostsOptIn(raw)), raw).toBe(false);
  });
});

describe("add_offline_download with the opt-in off", () => {
  let fixture: UnitFixture;
  let admin: string;
  beforeAll(async () => {
    fixture = await createUnitFixture();
    admin = await signInAdmin(fixture);
  });
  afterAll(() => fixture.close());

  it("refuses a private URL among others before any task is written, naming its host", async () => {
    for (const [url, host] of [
      ["http://0x7f.1:8787/api/me", "127.0.0.1"],
      ["http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"],
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
      ["http://localhost:8787/d/secret.txt", "localhost"],
    ]) {
      const reply = await send(
        fixture,
        "POST",
        "/api/fs/add_offline_download",
        { path: "/", urls: ["https://example.com/fine.bin", url], tool: "SimpleHttp" },
        { Authorization: admin },
      );
      expect(await reply.json(), url).toEqual({
        code: 400,
        message: `refused to download from ${host}: loopback, private and link-local addresses are off limits unless OFFLINE_DOWNLOAD_PRIVATE_HOSTS names them`,
        data: null,
      });
    }
    expect(await fixture.db.select().from(tasks)).toEqual([]);
  });
});
