// The bench's CPU figures: what a process tree (wrangler dev: workerd and its proxy) used.
import { readdirSync, readFileSync } from "node:fs";

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times (100 on every common build). */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU milliseconds used so far by a process and all its descendants (Linux /proc; 0 elsewhere):
 * wrangler dev's tree is the Worker (workerd) and wrangler's own proxy in front of it.
 */
export function treeCpuMs(root: number): number {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const name of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the command (which may hold spaces): state, ppid, ..., utime (14th), stime (15th).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(name);
    const parent = Number(fields[1]);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent)!.push(pid);
    ticks.set(pid, Number(fields[11]) + Number(fields[12]));
  }
  let total = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    total += ticks.get(pid) ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return (total * 1000) / CLOCK_TICKS_PER_SECOND;
}
