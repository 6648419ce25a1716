// The request path's and search's targets, each as a ratio measured in the run that prints it
// (docs/performance.md): an endpoint's share of the bare worker, or a search row's share of another
// row. The copies and the big listing print theirs beside their own anchors (bench-copy-pace.ts,
// bench-dav.ts).
//
// Every API request makes one database round trip (at the floor), and the bare worker makes none:
// the floor row, the bare worker making one round trip (SELECT 1) and nothing else, shows how much
// of the gap that round trip is. Each share of the bare worker is printed as a share of it too, and
// as a share of the row's replay (bench-replay.ts): the bare worker doing that request's recorded
// work (its body read, its pipeline, its reply) without Gatehouse's code.

import { replayOf } from "./bench-replay.ts";

/** The bench row of the bare worker with one database round trip (scripts/bench-baseline/worker.ts). */
export const FLOOR_ROW = "bare Hono GET /ping-db (one round trip)";

/** A row and the least share it should reach; `of` names the row it is measured against (the bare worker when absent). */
interface Target {
  row: string;
  least: number;
  of?: string;
}

export function targetsOf(searchNames: number, storages: number): Target[] {
  const k = `${searchNames / 1000}k`;
  return [
    { row: "GET /api/me (JWT)", least: 0.75 },
    { row: "POST /api/fs/list (Virtual, 60 entries)", least: 0.65 },
    { row: "POST /api/fs/get (a file)", least: 0.65 },
    { row: "GET /api/admin/user/list", least: 0.7 },
    { row: `GET /api/admin/storage/list (${storages / 1000}k, 50/page)`, least: 0.7 },
    { row: "PROPFIND /dav Depth 1 (60 entries)", least: 0.6 },
    { row: `POST /api/fs/search (${k} names, a word)`, least: 0.5, of: "GET /api/me (JWT)" },
    { row: `POST /api/fs/search (${k}, 2 characters)`, least: 0.25 },
  ];
}

/** One line per target whose rows this run measured: the ratio, the target, and whether it is met. */
export function printTargets(shares: Map<string, number>, targets: Target[]): string | null {
  const lines: string[] = [];
  const floor = shares.get(FLOOR_ROW);
  for (const { row, least, of } of targets) {
    const share = shares.get(row);
    const anchor = of === undefined ? 1 : shares.get(of);
    if (share === undefined || anchor === undefined) continue;
    const ratio = share / anchor;
    const percent = (value: number) => `${(value * 100).toFixed(0)}%`;
    const ofFloor = of === undefined && floor !== undefined ? `; ${percent(share / floor)} of the floor` : "";
    const replay = shares.get(replayOf(row));
    const ofReplay =
      of === undefined && replay !== undefined
        ? `; ${percent(share / replay)} of its replay, which ran at ${percent(replay)}`
        : "";
    lines.push(
      `  ${row.padEnd(48)} ${percent(ratio).padStart(5)} of ${of ?? "the bare worker"} (target: at least ${percent(least)}) ${ratio >= least ? "met" : "NOT MET"}${ofFloor}${ofReplay}`,
    );
  }
  if (lines.length === 0) return null;
  const floorLine =
    floor === undefined ? "" : `\n  (the floor: ${FLOOR_ROW} at ${(floor * 100).toFixed(0)}% of the bare worker)`;
  return `Targets, in this run:\n${lines.join("\n")}${floorLine}`;
}
