// Copies between storages at rclone's pace (BENCH_ONLY='copy pace'; docs/performance.md,
// docs/decisions.md D23): the same tree copied by `rclone copy` and by a Gatehouse copy task.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import {
  DAV_ROOT,
  DAV_USER,
  S3_ACCESS_KEY_ID,
  S3_BUCKET,
  S3_SECRET_ACCESS_KEY,
  startS3,
  startWebdav,
} from "../test/support/storage-servers.ts";
import {
  apiOf,
  bucketOf,
  davAddition,
  davGet,
  davMkcol,
  davPut,
  mount,
  rate,
  s3Addition,
  seconds,
  sha256,
} from "./bench-transfers.ts";

const MIB = 1024 ** 2;

/** A task unit's debug line (src/features/tasks/runner.ts, LOG_LEVEL=debug): when it began, and its phases. */
export interface UnitPhase {
  task: string;
  kind: string;
  at: number;
  queuedMs: number;
  claimMs: number;
  runMs: number;
  settleMs: number;
  inline?: boolean;
  ended: string;
}

/** Collects the task units' debug lines the Worker writes to `output` (wrangler dev's stdout). */
export function unitPhases(output: Readable): UnitPhase[] {
  const found: UnitPhase[] = [];
  let rest = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      const start = line.indexOf('{"level":"debug","task"');
      if (start >= 0) found.push(JSON.parse(line.slice(start)) as UnitPhase);
    }
  });
  return found;
}

/**
 * Where a task's seconds went, from its units' debug lines and `startedAt` (Date.now() as the
 * request left): each unit's start after the request, its wait in the queue (or "inline": run by the
 * invocation of the unit before it), its claim, run and settle; and when the bench saw it end.
 */
function phasesOf(lines: UnitPhase[], task: string, startedAt: number, seenAt: number): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const units = lines
    .filter((line) => line.task === task)
    .map(
      (line) =>
        `${line.kind} at +${s(line.at - startedAt)} (${line.inline ? "inline" : `queued ${s(line.queuedMs)}`}, claim ${s(line.claimMs)}, run ${s(line.runMs)}, settle ${s(line.settleMs)}, ${line.ended})`,
    );
  const last = lines.filter((line) => line.task === task).at(-1);
  const ended = last ? last.at + last.claimMs + last.runMs + last.settleMs : startedAt;
  return `${units.join("; ")}; seen done +${s(seenAt - startedAt)} (${s(seenAt - ended)} after the last settle)`;
}

/** `rclone copy` or `rclone move` (Debian's, its default transfers) with `args`, over `remotes`; its milliseconds. */
async function rclone(verb: "copy" | "move", remotes: Record<string, string>, args: string[]): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn("rclone", ["--config", "/dev/null", verb, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      // AWS_CA_BUNDLE, where set, makes rclone's S3 backend fail on its own HTTP transport; s3rver is plain HTTP.
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "AWS_CA_BUNDLE")),
        ...remotes,
      },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`rclone ${verb}: ${code}: ${stderr.slice(-500)}`)),
    );
  });
  return performance.now() - started;
}

/**
 * Copies between storages at rclone's pace (docs/performance.md, docs/decisions.md D23): the bench's
 * tree, 1,500 small files in 15 folders and one 200 MiB file, copied from webdav-server to s3rver by
 * `rclone copy` (its default 4 transfers) and by a Gatehouse copy task, each part alone, in the same
 * run against the same two servers; the Gatehouse rate as a share of rclone's (target: 80%). Then
 * each moves its own copy back, s3rver to webdav-server (`rclone move` against a move task), with
 * the same target. BENCH_COPY_ROUNDS (default 1) repeats them into fresh folders. With `phases`
 * (the units' debug lines), a line per big-file task says where its seconds went.
 */
export async function benchCopyPace(base: string, token: string, phases: UnitPhase[] | null): Promise<string[]> {
  const FOLDERS = 15;
  const PER_FOLDER = 100;
  const bigSize = 200 * MIB;
  const rounds = Number(process.env.BENCH_COPY_ROUNDS || 1);
  const api = apiOf(base, token);
  const lines: string[] = [];
  const s3 = await startS3();
  const dav = await startWebdav();
  try {
    const bucket = bucketOf(s3.endpoint);
    await mount(api, "/psrc", "WebDav", davAddition(dav.url, DAV_ROOT));
    await mount(api, "/pdst", "S3", s3Addition(s3.endpoint, "/pace"));
    const smallText = (folder: number, file: number) => `file ${file} of folder ${folder}\n`;
    await davMkcol(dav.url, "/pace");
    await davMkcol(dav.url, "/pace/small");
    for (let folder = 0; folder < FOLDERS; folder++) {
      await davMkcol(dav.url, `/pace/small/d${folder}`);
      const puts: Promise<void>[] = [];
      for (let file = 0; file < PER_FOLDER; file++)
        puts.push(davPut(dav.url, `/pace/small/d${folder}/f${file}.txt`, smallText(folder, file)));
      await Promise.all(puts);
    }
    const big = randomBytes(bigSize);
    // Once more if the server closed the kept-alive connection as the PUT began (ECONNRESET).
    await davPut(dav.url, "/pace/big.bin", big).catch(() => davPut(dav.url, "/pace/big.bin", big));
    const obscured = execFileSync("rclone", ["obscure", DAV_USER.password], { encoding: "utf8" }).trim();
    const remotes = {
      RCLONE_CONFIG_PACESRC_TYPE: "webdav",
      RCLONE_CONFIG_PACESRC_URL: `${dav.url}${DAV_ROOT}`,
      RCLONE_CONFIG_PACESRC_USER: DAV_USER.username,
      RCLONE_CONFIG_PACESRC_PASS: obscured,
      RCLONE_CONFIG_PACEDST_TYPE: "s3",
      RCLONE_CONFIG_PACEDST_PROVIDER: "Other",
      RCLONE_CONFIG_PACEDST_ENDPOINT: s3.endpoint,
      RCLONE_CONFIG_PACEDST_ACCESS_KEY_ID: S3_ACCESS_KEY_ID,
      RCLONE_CONFIG_PACEDST_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY,
    };
    /** A Gatehouse task moving or copying `names` of `from` into `to` (made first), polled every 100 ms until it ends; its milliseconds. */
    const transferTask = async (verb: "copy" | "move", from: string, names: string[], to: string) => {
      await api("/api/fs/mkdir", { path: to });
      const started = performance.now();
      const startedAt = Date.now();
      const reply = await api(`/api/fs/${verb}`, { src_dir: from, dst_dir: to, names });
      if (reply.code !== 200) throw new Error(`${verb}: ${reply.message}`);
      const id = reply.data.tasks[0].id;
      for (;;) {
        const info = await api(`/api/task/${verb}/info?tid=${encodeURIComponent(id)}`);
        if (info.data.state === 2) break;
        if (info.data.state === 4 || info.data.state === 7)
          throw new Error(`${verb} ended ${info.data.state}: ${info.data.error}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const ms = performance.now() - started;
      // Its units' debug lines are written as they settle: a moment for the last to arrive.
      if (phases && names.includes("big.bin")) {
        const seenAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 300));
        timings.push(`  ${verb} of big.bin, ${seconds(ms)}: ${phasesOf(phases, id, startedAt, seenAt)}`);
      }
      return ms;
    };
    const timings: string[] = [];
    const copyTask = (names: string[], dir: string) => transferTask("copy", "/psrc/pace", names, `/pdst/${dir}`);
    const share = (theirs: number, ours: number) => `${((theirs / ours) * 100).toFixed(0)}%`;
    for (let round = 1; round <= rounds; round++) {
      const rcloneSmall = await rclone("copy", remotes, [
        "pacesrc:pace/small",
        `pacedst:${S3_BUCKET}/pace/rclone${round}/small`,
      ]);
      const ourSmall = await copyTask(["small"], `gatehouse${round}`);
      const rcloneBig = await rclone("copy", remotes, [
        "pacesrc:pace",
        `pacedst:${S3_BUCKET}/pace/rclone${round}`,
        "--include",
        "/big.bin",
      ]);
      const ourBig = await copyTask(["big.bin"], `gatehouse${round}`);
      const landed = (await bucket.files(`pace/gatehouse${round}/small/`)).length;
      const exact = sha256(await bucket.bytes(`pace/gatehouse${round}/big.bin`)) === sha256(big);
      const rcloneLanded = (await bucket.files(`pace/rclone${round}/small/`)).length;
      lines.push(
        `Copy between storages, webdav-server to s3rver (round ${round} of ${rounds}, same run): ` +
          `${FOLDERS * PER_FOLDER} small files in ${FOLDERS} folders, one Gatehouse task ${seconds(ourSmall)} (${landed} landed) ` +
          `vs rclone copy ${seconds(rcloneSmall)} (${rcloneLanded} landed): ${((rcloneSmall / ourSmall) * 100).toFixed(0)}% of rclone's rate; ` +
          `one 200 MiB file ${seconds(ourBig)} (${rate(bigSize, ourBig)}, ${exact ? "byte-exact" : "NOT byte-exact"}) ` +
          `vs rclone ${seconds(rcloneBig)} (${rate(bigSize, rcloneBig)}): ${((rcloneBig / ourBig) * 100).toFixed(0)}% (target: 80% each).`,
      );
      // Each moves its own copy back to webdav-server: the same files, the same two servers.
      await davMkcol(dav.url, `/pace/moved${round}`);
      const back = `pacesrc:pace/moved${round}`;
      const from = (who: string) => `pacedst:${S3_BUCKET}/pace/${who}${round}`;
      const rcloneMoveSmall = await rclone("move", remotes, [`${from("rclone")}/small`, `${back}/rclone/small`]);
      const ourMoveSmall = await transferTask("move", `/pdst/gatehouse${round}`, ["small"], `/psrc/pace/moved${round}`);
      const rcloneMoveBig = await rclone("move", remotes, [from("rclone"), `${back}/rclone`, "--include", "/big.bin"]);
      const ourMoveBig = await transferTask("move", `/pdst/gatehouse${round}`, ["big.bin"], `/psrc/pace/moved${round}`);
      const left = (await bucket.files(`pace/gatehouse${round}/`)).length;
      const rcloneLeft = (await bucket.files(`pace/rclone${round}/`)).length;
      const movedExact = sha256(await davGet(dav.url, `/pace/moved${round}/big.bin`)) === sha256(big);
      lines.push(
        `Move between storages, s3rver to webdav-server (round ${round}, same run), each its own copy: ` +
          `the ${FOLDERS * PER_FOLDER} small files, one Gatehouse task ${seconds(ourMoveSmall)} vs rclone move ${seconds(rcloneMoveSmall)}: ${share(rcloneMoveSmall, ourMoveSmall)} of rclone's rate; ` +
          `the 200 MiB file ${seconds(ourMoveBig)} (${movedExact ? "byte-exact" : "NOT byte-exact"}; ${left} objects left at the source) ` +
          `vs rclone move ${seconds(rcloneMoveBig)} (${rcloneLeft} left): ${share(rcloneMoveBig, ourMoveBig)} (target: 80% each).`,
        ...timings.splice(0),
      );
    }
  } finally {
    await Promise.all([s3.close(), dav.close()]);
  }
  return lines;
}
