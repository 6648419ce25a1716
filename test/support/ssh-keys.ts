// Real OpenSSH public keys for the tests, made by ssh-keygen (Debian's openssh-client), with the
// fingerprint ssh-keygen itself prints. The sk- (security key) variants need a hardware token to
// generate, so they are assembled from a generated key's parts; ssh-keygen still fingerprints them.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestKey {
  name: string;
  line: string;
  /** What `ssh-keygen -lf` prints, e.g. SHA256:NmLCfiO0z3f… */
  fingerprint: string;
}

const GENERATED: [string, string[]][] = [
  ["ed25519", ["-t", "ed25519"]],
  ["rsa-2048", ["-t", "rsa", "-b", "2048"]],
  ["rsa-3072", ["-t", "rsa", "-b", "3072"]],
  ["ecdsa-256", ["-t", "ecdsa", "-b", "256"]],
  ["ecdsa-384", ["-t", "ecdsa", "-b", "384"]],
  ["ecdsa-521", ["-t", "ecdsa", "-b", "521"]],
];

export function generateTestKeys(): { keys: TestKey[]; dsa: string; rsa768Blob: string } {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-keys-"));
  try {
    const keys = GENERATED.map(([name, args]) => {
      const file = join(dir, name);
      execFileSync("ssh-keygen", ["-q", ...args, "-N", "", "-C", `tester@${name}`, "-f", file]);
      return keyFromFile(name, `${file}.pub`);
    });
    const ed25519 = wireFields(keys[0]!.line);
    const ecdsa = wireFields(keys.find((k) => k.name === "ecdsa-256")!.line);
    keys.push(assembled(dir, "sk-ed25519", "sk-ssh-ed25519@openssh.com", [ed25519[1]!, Buffer.from("ssh:")]));
    keys.push(
      assembled(dir, "sk-ecdsa-256", "sk-ecdsa-sha2-nistp256@openssh.com", [ecdsa[1]!, ecdsa[2]!, Buffer.from("ssh:")]),
    );
    const dsaFile = join(dir, "dsa");
    execFileSync("ssh-keygen", ["-q", "-t", "dsa", "-N", "", "-f", dsaFile]);
    // An RSA key too small to accept: exponent 65537 and a 768-bit modulus.
    const modulus = Buffer.concat([Buffer.from([0x00, 0xc0]), Buffer.alloc(95, 0x11)]);
    const rsa768Blob = encode([Buffer.from("ssh-rsa"), Buffer.from([0x01, 0x00, 0x01]), modulus]).toString("base64");
    return { keys, dsa: readFileSync(`${dsaFile}.pub`, "utf8"), rsa768Blob };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function keyFromFile(name: string, file: string): TestKey {
  const fingerprint = execFileSync("ssh-keygen", ["-lf", file]).toString().split(" ")[1]!;
  return { name, line: readFileSync(file, "utf8").trim(), fingerprint };
}

function assembled(dir: string, name: string, type: string, fields: Buffer[]): TestKey {
  const file = join(dir, `${name}.pub`);
  writeFileSync(file, `${type} ${encode([Buffer.from(type), ...fields]).toString("base64")} tester@${name}\n`);
  return keyFromFile(name, file);
}

/** The length-prefixed fields of a key line's blob. */
export function wireFields(line: string): Buffer[] {
  const blob = Buffer.from(line.split(" ")[1]!, "base64");
  const fields: Buffer[] = [];
  for (let offset = 0; offset < blob.length; ) {
    const length = blob.readUInt32BE(offset);
    fields.push(blob.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
  }
  return fields;
}

export function encode(fields: Buffer[]): Buffer {
  return Buffer.concat(
    fields.flatMap((field) => [Buffer.from([0, 0, 0, 0].map((_, i) => (field.length >>> (24 - 8 * i)) & 0xff)), field]),
  );
}
