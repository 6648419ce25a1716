// Running a driver's check, bounded in time, and turning its outcome into a storage's `status`:
// `work`, or a sentence a person can act on (reference §12.1).
import { cleanPath } from "../lib/path.ts";
import { CheckFailed, type Addition, type CheckContext, type Driver, type MountedStorage } from "./types.ts";

export const WORKING = "work";
export const CHECK_TIMEOUT_MS = 5_000;
/** After the signal fires, how long a check gets to report in its own words before it is cut off. */
const GRACE_MS = 500;

/** The status a storage gets from its driver's check: `work` or the failure's text. Never throws. */
export async function checkStorage(
  driver: Driver,
  additionJson: string,
  storages: MountedStorage[],
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  let cutOff: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    cutOff = setTimeout(() => reject(new CheckFailed(`the check got no answer within ${seconds(timeoutMs)}`)), timeoutMs + GRACE_MS);
  });
  try {
    const addition = readAddition(driver, additionJson);
    await Promise.race([driver.check(addition, { signal, timeoutMs, storages }), deadline]);
    return WORKING;
  } catch (error) {
    return errorText(error);
  } finally {
    clearTimeout(cutOff);
  }
}

/** The addition as the driver's template reads it: a missing key takes the item's default. */
export function readAddition(driver: Driver, additionJson: string): Addition {
  const values = parseAddition(additionJson);
  if (values === null) throw new CheckFailed("addition is not a JSON object");
  const defaults = new Map(driver.additional.map((item) => [item.name, item.default]));
  const text = (name: string) => {
    const value = values[name];
    return value === undefined || value === null ? (defaults.get(name) ?? "") : String(value);
  };
  return { text, flag: (name) => text(name) === "true" };
}

/** No mount path is longer: `mount_path` takes at most 1024 characters, and cleaning may add a leading slash. */
const LONGEST_MOUNT_PATH = 1025;

/**
 * The mount paths a check must see for a storage of `driver` (every prefix of each path it points
 * into, up to the longest a mount path can be), so callers read just those rows; empty for drivers
 * that point nowhere. Built segment by segment: a path of many thousand segments costs linear time.
 */
export function mountsToRead(driver: Driver, additionJson: string): string[] {
  if (!driver.pointsInto || parseAddition(additionJson) === null) return [];
  const prefixes = new Set<string>();
  for (const path of driver.pointsInto(readAddition(driver, additionJson))) {
    prefixes.add("/");
    let prefix = "";
    for (const segment of cleanPath(path).split("/").filter(Boolean)) {
      prefix += `/${segment}`;
      if (prefix.length > LONGEST_MOUNT_PATH) break;
      prefixes.add(prefix);
    }
  }
  return [...prefixes];
}

/** The object an `addition` string holds, or null when it holds anything else. */
export function parseAddition(additionJson: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(additionJson);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function requireText(addition: Addition, name: string): string {
  const value = addition.text(name);
  if (value === "") throw new CheckFailed(`${name} is required`);
  return value;
}

/** `cannot reach <target>: <why>`; the why is the timeout when the check's time ran out. */
export function unreachable(target: string, error: unknown, context: Pick<CheckContext, "signal" | "timeoutMs">): CheckFailed {
  const why = context.signal.aborted ? `no answer within ${seconds(context.timeoutMs)}` : errorText(error);
  return new CheckFailed(`cannot reach ${target}: ${why}`);
}

/**
 * An error's message with its causes (`fetch failed: connect ECONNREFUSED …`), with the credentials
 * of any URL in it (`//user:password@`) blanked: it becomes a storage's status and the reply.
 */
export function errorText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && parts.length < 4; e = e instanceof Error ? e.cause : undefined) {
    const text = e instanceof Error ? e.message : String(e);
    if (text && !parts.includes(text)) parts.push(text);
  }
  return redactUserinfo(parts.join(": ") || "unknown error");
}

/** `http://user:secret@host/` → `http://***@host/`, wherever a URL's userinfo appears in the text. */
export function redactUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1***@");
}

/** `5 s`, for messages about the time a check had. */
export const seconds = (ms: number) => `${ms / 1000} s`;
