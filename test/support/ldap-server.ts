// A real directory for LDAP sign-in: Debian's slapd (package `slapd`) run as a plain process with a
// configuration of its own in a temp dir (slapd.conf, the mdb backend, the core, cosine and
// inetorgperson schemas), the entries below loaded with slapadd before it starts, listening on
// ldap://127.0.0.1:<free port>. It lives at most LIFETIME_SECONDS (coreutils `timeout`) even if
// the test run dies, and is stopped in teardown.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/wrangler-dev.ts";
import { LDAP_DIRECTORY } from "./ldap-directory.ts";

const SLAPD = "/usr/sbin/slapd";
const SLAPADD = "/usr/sbin/slapadd";
const LIFETIME_SECONDS = 600;
const READY_TIMEOUT_MS = 20_000;

export interface RunningDirectory {
  /** `ldap://127.0.0.1:<port>` */
  url: string;
  stop(): Promise<void>;
}

function entries(): string {
  const { suffix, peopleBase, managerDn, managerPassword, users } = LDAP_DIRECTORY;
  const people = Object.entries(users).map(
    ([uid, password]) => `dn: uid=${uid},${peopleBase}
objectClass: inetOrgPerson
uid: ${uid}
cn: ${uid}
sn: ${uid}
mail: ${uid}@gatehouse.test
userPassword: ${password}
`,
  );
  return [
    `dn: ${suffix}
objectClass: dcObject
objectClass: organization
dc: gatehouse
o: Gatehouse tests
`,
    `dn: ${peopleBase}
objectClass: organizationalUnit
ou: people
`,
    `dn: ${managerDn}
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: manager
userPassword: ${managerPassword}
`,
    ...people,
  ].join("\n");
}

export async function startDirectory(): Promise<RunningDirectory> {
  if (spawnSync("sh", ["-c", `[ -x ${SLAPD} ]`]).status !== 0)
    throw new Error(`${SLAPD} is not installed: apt-get install -y slapd ldap-utils (.ci/run does this)`);
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-slapd-"));
  mkdirSync(join(dir, "data"));
  const conf = join(dir, "slapd.conf");
  // Passwords are compared as stored (cleartext is fine for a test directory); anyone may search
  // and bind (`auth`), only the manager reads userPassword's other uses.
  writeFileSync(
    conf,
    `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile ${join(dir, "slapd.pid")}
argsfile ${join(dir, "slapd.args")}
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 16777216
suffix "${LDAP_DIRECTORY.suffix}"
directory ${join(dir, "data")}
access to attrs=userPassword by anonymous auth by self read by * none
access to * by * read
`,
  );
  writeFileSync(join(dir, "entries.ldif"), entries());
  const added = spawnSync(SLAPADD, ["-f", conf, "-l", join(dir, "entries.ldif")], { encoding: "utf8" });
  if (added.status !== 0) throw new Error(`slapadd failed: ${added.stderr}`);

  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child = spawn(
    "timeout",
    ["--kill-after=5", String(LIFETIME_SECONDS), SLAPD, "-h", `${url}/`, "-f", conf, "-d", "0"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  await untilListening(child, port, () => stderr);
  return { url, stop: () => stopAndRemove(child, dir) };
}

async function untilListening(child: ChildProcess, port: number, stderr: () => string) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`slapd exited with ${child.exitCode}: ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`slapd did not listen on ${port} within ${READY_TIMEOUT_MS} ms: ${stderr()}`);
}

async function stopAndRemove(child: ChildProcess, dir: string) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
