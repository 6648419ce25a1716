// The test ZIPs of test/fixtures/make-zips.py (Python's zipfile, a few patched), with what zipfile
// reads from each: made once per process, in Node (the unit tests, the workerd project's setup).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

interface ZipOracle {
  comment: string;
  entries: { name: string; size: number; dir: boolean; content?: string; error?: string }[];
}
export type ZipFixtures = Record<string, { base64: string; oracle: ZipOracle }>;

let made: ZipFixtures | undefined;

export function zipFixtures(): ZipFixtures {
  made ??= JSON.parse(
    execFileSync("python3", [fileURLToPath(new URL("../fixtures/make-zips.py", import.meta.url))], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    }),
  ) as ZipFixtures;
  return made;
}

export const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
