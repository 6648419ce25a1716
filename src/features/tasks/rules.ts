// The task API's decisions: tache's state numbers and AList's TaskInfo (AList v3.58.0
// server/handles/task.go:17-60, tache v0.1.5 state.go:6-27), the names the web UI's task pages
// parse (AList v3.58.0 internal/fs/copy.go:33-35, OpenList internal/fs/copy_move.go:49-51,
// internal/offline_download/tool/download.go:172-174), who sees which task, and what its creator may
// still have it do.
import type { RoleRow, UserRow } from "../../auth/store.ts";
import type { tasks } from "../../db/schema.ts";
import { cleanPath, isWithin, parentOf } from "../fs/path.ts";
import {
  canReadPath,
  grantsOf,
  type MetaRow,
  mayReach,
  metaGrantsWrite,
  nearestMeta,
  Permission,
  permissionAt,
  type Viewer,
  withinPathLimit,
} from "../fs/rules.ts";
import { taskPaths } from "./payload.ts";
import { CREATOR_DISABLED, CREATOR_GONE, creatorMayNot } from "./messages.ts";

export type TaskRow = typeof tasks.$inferSelect;

export const TaskState = {
  PENDING: 0,
  RUNNING: 1,
  SUCCEEDED: 2,
  CANCELING: 3,
  CANCELED: 4,
  ERRORED: 5,
  FAILING: 6,
  FAILED: 7,
  WAITING_RETRY: 8,
  BEFORE_RETRY: 9,
} as const;

/** What `undone` and `done` list (AList v3.58.0 server/handles/task.go:126-151). */
export const UNDONE_STATES = [0, 1, 3, 5, 6, 8, 9];
export const DONE_STATES = [2, 4, 7];

/** The kinds the web UI has task pages for (OpenList server/handles/task.go:220-228), and v3.58's s3_transition. */
export const TASK_KINDS = [
  "upload",
  "copy",
  "move",
  "offline_download",
  "offline_download_transfer",
  "decompress",
  "decompress_upload",
  "s3_transition",
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** AList's TaskInfo. */
export interface TaskInfo {
  id: string;
  name: string;
  creator: string;
  creator_role: number[];
  state: number;
  status: string;
  progress: number;
  start_time: string | null;
  end_time: string | null;
  total_bytes: number;
  error: string;
}

const STATUS: Record<number, string> = {
  0: "pending",
  1: "running",
  2: "succeeded",
  3: "canceling",
  4: "canceled",
  7: "failed",
  8: "waiting retry",
};

/** 0..100 from the bytes written; a task with no bytes (empty files, folders only) jumps to 100 when it succeeds. */
function progressOf(row: Pick<TaskRow, "totalBytes" | "doneBytes" | "state">): number {
  if (row.state === TaskState.SUCCEEDED) return 100;
  if (row.totalBytes <= 0) return 0;
  return Math.min(100, Math.floor((row.doneBytes * 10_000) / row.totalBytes) / 100);
}

export function taskInfo(row: TaskRow): TaskInfo {
  const steps = row.unitsTotal > 0 ? ` (${row.unitsDone} of ${row.unitsTotal} steps)` : "";
  return {
    id: row.id,
    name: row.name,
    creator: row.creator,
    creator_role: row.creatorRoles,
    state: row.state,
    status: `${STATUS[row.state] ?? "running"}${row.state === TaskState.RUNNING ? steps : ""}`,
    progress: progressOf(row),
    start_time: row.startedAtMs === null ? null : new Date(row.startedAtMs).toISOString(),
    end_time: row.endedAtMs === null ? null : new Date(row.endedAtMs).toISOString(),
    total_bytes: row.totalBytes,
    error: row.error,
  };
}

/** `copy [/src mount](/actual path) to [/dst mount](/actual dir)`, the shape the Copy and Move pages parse. */
type Place = { storage: { mountPath: string }; actualPath: string };
export const transferTaskName = (verb: "copy" | "move", source: Place, target: Place) =>
  `${verb} [${source.storage.mountPath}](${source.actualPath}) to [${target.storage.mountPath}](${target.actualPath})`;

/** `download <url> to (<dir>)`, the shape the offline download page parses. */
export const downloadTaskName = (url: string, dir: string) => `download ${url} to (${dir})`;

// ---- What a task's creator may still have it do (docs/decisions.md D15.10)

/** A task's creator as it stands now, and the metas, read with the unit's claim or the retry. */
export interface CreatorNow {
  /** Null when the account was deleted. */
  user: UserRow | null;
  roles: RoleRow[];
  metas: MetaRow[];
}

/**
 * Why the units of `task` may no longer run for its creator as the creator stands now, or null:
 * the checks the request that made the task ran (fs/copy, fs/move, fs/add_offline_download), over
 * the file side's own rules, at the paths the request named (the task's payload): the account
 * exists and is enabled, the paths lie within its base path and path limit and past the hide
 * rules, the copy or move bit at the source folder, write (or a meta's write grant) at the target,
 * the offline-download bit there. Meta passwords are not checked: the task does not keep the
 * request's password.
 */
export function creatorRefusal(task: Pick<TaskRow, "kind" | "payload">, creator: CreatorNow): string | null {
  const { user, roles, metas } = creator;
  if (!user) return CREATOR_GONE;
  if (user.disabled) return CREATOR_DISABLED;
  const viewer: Viewer = { grants: grantsOf(roles, user.permission), basePath: user.basePath };
  const reaches = (path: string) =>
    isWithin(path, cleanPath(viewer.basePath || "/")) &&
    withinPathLimit(viewer.grants, path) &&
    canReadPath(viewer.grants, path) &&
    mayReach(viewer, metas, path);
  const holds = (path: string, bit: number) => (permissionAt(viewer.grants, path) & bit) !== 0;
  const writes = (dir: string) => holds(dir, Permission.WRITE) || metaGrantsWrite(nearestMeta(metas, dir), dir);
  const { from, toDir } = taskPaths(task);
  if (task.kind === "copy" || task.kind === "move") {
    if (from === null || toDir === null) return null;
    const src = parentOf(from);
    if (!reaches(src) || !reaches(from) || !holds(src, task.kind === "move" ? Permission.MOVE : Permission.COPY))
      return creatorMayNot(`${task.kind} from ${src}`);
    if (!reaches(toDir) || !writes(toDir)) return creatorMayNot(`write to ${toDir}`);
    return null;
  }
  if (task.kind === "offline_download" && toDir !== null) {
    if (!reaches(toDir) || !holds(toDir, Permission.OFFLINE_DOWNLOAD))
      return creatorMayNot(`download offline to ${toDir}`);
    if (!writes(toDir)) return creatorMayNot(`write to ${toDir}`);
  }
  return null;
}

/** tache's ids: 21 URL-safe characters (tache v0.1.5 manager.go:39-41). */
export function newTaskId(): string {
  const alphabet = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict";
  return Array.from(crypto.getRandomValues(new Uint8Array(21)), (byte) => alphabet[byte & 63]).join("");
}

// ---- Offline download: which hosts a download may reach (docs/decisions.md D15.9)

/** Refused: loopback, private, link-local, shared, multicast and reserved IPv4 (RFC 6890's non-global blocks). */
function privateIpv4(a: number, b: number, c: number): boolean {
  return (
    a === 0 || // "this network"; 0.0.0.0 reaches the local host
    a === 10 ||
    (a === 100 && b >= 64 && b < 128) || // shared address space (carrier NAT)
    a === 127 ||
    (a === 169 && b === 254) || // link-local, cloud metadata (169.254.169.254)
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && b === 0 && c === 0) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

/** The 8 groups of an IPv6 address as the URL parser writes it (compressed, maybe a dotted tail); null if not one. */
function ipv6Groups(text: string): number[] | null {
  let address = text;
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number];
    address = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const part = (half: string | undefined) => (half ? half.split(":") : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(0, fill)).fill("0"), ...tail];
  if (groups.length !== 8 || !groups.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return null;
  return groups.map((group) => Number.parseInt(group, 16));
}

/** Refused: ::, ::1, fc00::/7, fe80::/10, fec0::/10, multicast, and the forms that carry an IPv4 address that is refused. */
function privateIpv6(g: number[]): boolean {
  const v4 = (high: number, low: number) => privateIpv4(high >> 8, high & 0xff, low >> 8);
  const zeros = (n: number) => g.slice(0, n).every((group) => group === 0);
  if (zeros(5) && g[5] === 0xffff) return v4(g[6]!, g[7]!); // ::ffff:a.b.c.d, IPv4-mapped
  if (zeros(4)) return true; // the rest of ::/64: ::, ::1, IPv4-compatible ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b) return g[2] !== 0 || v4(g[6]!, g[7]!); // NAT64: 64:ff9b::/96, 64:ff9b:1::/48
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!); // 6to4
  if (g[0] === 0x2001 && g[1] === 0) return v4(~g[6]! & 0xffff, ~g[7]! & 0xffff); // Teredo's client address
  if (g[0] === 0x100 && zeros(4)) return true; // discard-only 100::/64
  return (
    (g[0]! & 0xfe00) === 0xfc00 || (g[0]! & 0xffc0) === 0xfe80 || (g[0]! & 0xffc0) === 0xfec0 || g[0]! >> 8 === 0xff
  );
}

/**
 * Does `hostname` (a URL's, as the WHATWG parser normalized it: every IPv4 spelling, 2130706433,
 * 0x7f.1, 127.1, 0177.0.0.1, is dotted decimal by then, IPv6 is compressed in brackets) name the
 * Worker's own machine or a private network? Literal addresses and the `localhost` names only: a
 * Worker cannot resolve a name to learn its address (docs/decisions.md D15.9).
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) return privateIpv4(Number(v4[1]), Number(v4[2]), Number(v4[3]));
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = ipv6Groups(host.slice(1, -1));
    return groups === null || privateIpv6(groups);
  }
  return false;
}

/**
 * The opt-in of `OFFLINE_DOWNLOAD_PRIVATE_HOSTS`: `*` lets a download reach every private host; a
 * comma-separated list, those hosts only (in any spelling: each is normalized as a URL's host);
 * empty or unset, none.
 */
export function privateHostsOptIn(raw: string | undefined): (hostname: string) => boolean {
  const entries = (raw ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.includes("*")) return () => true;
  const hosts = new Set(
    entries.flatMap((entry) => {
      try {
        return [new URL(`http://${entry}`).hostname];
      } catch {
        return [];
      }
    }),
  );
  return (hostname) => hosts.has(hostname);
}

/** May a download fetch `url`: http or https, and a public host or one the opt-in names? */
export function downloadTargetAllowed(url: URL, optIn: (hostname: string) => boolean): boolean {
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  return !isPrivateHost(url.hostname) || optIn(url.hostname);
}
