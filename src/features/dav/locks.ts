// WebDAV locks at work (RFC 4918 §6-7, §10.4): the `If` header parsed and evaluated against the
// locks a request read, and the rule that a locked resource changes only for a request that
// submits the lock's token, as the lock's owner.
import type { LockRow } from "./store.ts";
import { isWithin } from "../fs/path.ts";

export interface IfCondition {
  not: boolean;
  token?: string;
  etag?: string;
}

/** One parenthesised list of an If header; `resource` is the tagged URL, or null for the request's own. */
export interface IfList {
  resource: string | null;
  conditions: IfCondition[];
}

/** An If header that does not follow RFC 4918 §10.4's grammar: 400. */
export class BadIfHeader extends Error {
  override name = "BadIfHeader";
}

/** Parses an If header; an absent header is an empty list. */
export function parseIf(header: string | null): IfList[] {
  if (header === null) return [];
  const lists: IfList[] = [];
  let resource: string | null = null;
  let tagged: boolean | null = null;
  let i = 0;
  const skip = () => {
    while (i < header.length && /\s/.test(header[i]!)) i++;
  };
  const until = (end: string) => {
    const close = header.indexOf(end, i + 1);
    if (close < 0) throw new BadIfHeader(`If header: ${end} missing`);
    const text = header.slice(i + 1, close);
    i = close + 1;
    return text;
  };
  for (skip(); i < header.length; skip()) {
    if (header[i] === "<") {
      if (tagged === false) throw new BadIfHeader("If header: a resource tag after an untagged list");
      tagged = true;
      resource = until(">");
      skip();
      if (header[i] !== "(") throw new BadIfHeader("If header: a resource tag without a list");
      continue;
    }
    if (header[i] !== "(") throw new BadIfHeader("If header: expected (");
    if (tagged === null) tagged = false;
    i++;
    const conditions: IfCondition[] = [];
    for (skip(); header[i] !== ")"; skip()) {
      if (i >= header.length) throw new BadIfHeader("If header: ) missing");
      let not = false;
      if (/^not(?!\w)/i.test(header.slice(i, i + 4))) {
        not = true;
        i += 3;
        skip();
      }
      if (header[i] === "<") conditions.push({ not, token: until(">") });
      else if (header[i] === "[") conditions.push({ not, etag: until("]") });
      else throw new BadIfHeader("If header: expected a state token or an entity tag");
    }
    i++;
    if (conditions.length === 0) throw new BadIfHeader("If header: an empty list");
    lists.push({ resource: tagged ? resource : null, conditions });
  }
  return lists;
}

/** The lock tokens a request submits: every token its If header names, outside `Not`. */
export const submittedTokens = (lists: readonly IfList[]) => new Set(lists.flatMap((list) => list.conditions.filter((c) => !c.not && c.token).map((c) => c.token!)));

/** Does `lock` cover `path`: on it, or above it with depth infinity? */
export const covers = (lock: LockRow, path: string) => lock.path === path || (lock.depth === -1 && isWithin(path, lock.path));

/**
 * Whether the If header holds (RFC 4918 §10.4): some list whose conditions all hold. A token holds
 * when a live lock with it covers the list's resource; an entity tag when it is the resource's.
 * No header holds trivially.
 */
export function ifHolds(lists: readonly IfList[], locks: readonly LockRow[], requestPath: string, resolve: (href: string) => string | null, etagOf: (path: string) => string | null): boolean {
  if (lists.length === 0) return true;
  return lists.some((list) => {
    const path = list.resource === null ? requestPath : resolve(list.resource);
    if (path === null) return false;
    return list.conditions.every((condition) => {
      const holds = condition.token !== undefined ? locks.some((lock) => lock.token === condition.token && covers(lock, path)) : etagOf(path) === condition.etag;
      return holds !== condition.not;
    });
  });
}

/**
 * The first lock that stands in the way of changing `path` (with `tree`, anything below it too),
 * unless the request submitted its token as its owner; null when the change may go ahead.
 */
export function blockingLock(locks: readonly LockRow[], path: string, tree: boolean, submitted: ReadonlySet<string>, userId: number): LockRow | null {
  return locks.find((lock) => (covers(lock, path) || (tree && isWithin(lock.path, path))) && !(submitted.has(lock.token) && lock.userId === userId)) ?? null;
}

/** `Timeout: Second-600, Infinite`: the first value we accept, capped; the default without one. */
export const DEFAULT_LOCK_SECONDS = 3600;
export const MAX_LOCK_SECONDS = 86_400;

export function lockTimeout(header: string | null): number {
  for (const part of (header ?? "").split(",").map((p) => p.trim())) {
    if (/^infinite$/i.test(part)) return MAX_LOCK_SECONDS;
    const seconds = /^second-(\d{1,10})$/i.exec(part);
    if (seconds) return Math.max(1, Math.min(Number(seconds[1]), MAX_LOCK_SECONDS));
  }
  return DEFAULT_LOCK_SECONDS;
}
