// What the admin may read and change of the settings (docs/api.md "Settings", docs/decisions.md
// D3.9, D4.9). Each decision takes plain inputs (the parsed query or body, what the route's plan
// read) and returns data or throws the refusal (ApiError) the wire answers. What a value may be is
// validate.ts's; talking to aria2, qBittorrent and Transmission is offline-download.ts's; the
// queries store.ts's. The defaults and the cloud-drive tools' refusal: docs/decisions.md D18.3, D18.4.
import { newPermanentToken } from "../../auth/random.ts";
import type { Database } from "../../db/client.ts";
import { type SettingDefinition, SettingFlag, settingDefinitionByKey } from "../../db/settings.ts";
import { ApiError } from "../../http/errors.ts";
import {
  KEY_REQUIRED,
  KEYS_EMPTY,
  aria2VersionReply,
  cloudToolUnavailable,
  notDeprecated,
  settingNotFound,
  tokenRefused,
} from "./messages.ts";
import {
  aria2Version,
  checkQbittorrent,
  parseAria2Uri,
  parseQbittorrentUrl,
  parseTransmissionUri,
  TransmissionClient,
} from "./offline-download.ts";
import { deleteDeprecatedSetting, forgetPublicSettings, saveSettingValues, type SettingRow } from "./store.ts";
import { permanentTokenProblem, settingChanges, type RoleName, type SettingValue } from "./validate.ts";

type KeyQuery = { key?: string | undefined; keys?: string | undefined };

/** The keys a get asks for: `keys` when given (even with `key`), else `key`; `many` when by `keys`. */
function requestedKeys(query: KeyQuery): { keys: string[]; many: boolean } {
  if (query.keys?.trim()) {
    const keys = query.keys
      .split(",")
      .map((k) => k.trim())
      .filter(Boolean);
    if (keys.length === 0) throw new ApiError(400, KEYS_EMPTY);
    return { keys, many: true };
  }
  if (query.key?.trim()) return { keys: [query.key.trim()], many: false };
  throw new ApiError(400, KEY_REQUIRED);
}

/** The keys a get names, or none (a request requestedKeys refuses): what its plan reads. */
export function keysOrNone(query: KeyQuery): string[] {
  try {
    return requestedKeys(query).keys;
  } catch {
    return [];
  }
}

/** The rows a get asked for, in request order, from what its plan read; a missing key is a 404. */
export function askedSettings(
  query: KeyQuery,
  found: ReadonlyMap<string, SettingRow>,
): { rows: SettingRow[]; many: boolean } {
  const { keys, many } = requestedKeys(query);
  const rows = keys.map((key) => {
    const row = found.get(key);
    if (!row) throw new ApiError(404, settingNotFound(key));
    return row;
  });
  return { rows, many };
}

/**
 * Saves the values that change, all or nothing (validate.ts refuses every problem at once). The
 * guard's batch wrote them already when it could prove the request valid (store.ts settingsSave);
 * otherwise they are written here, once validated.
 */
export async function saveSettings(
  db: Database,
  items: readonly SettingValue[],
  reads: { rows: ReadonlyMap<string, SettingRow>; roles: readonly RoleName[]; wrote: boolean },
): Promise<void> {
  if (items.length === 0) return;
  const stored = new Map([...reads.rows].map(([key, row]) => [key, row.value]));
  const changes = settingChanges(items, stored, reads.roles);
  if (reads.wrote) forgetPublicSettings(db);
  else await saveSettingValues(db, changes);
}

/** Deletes a deprecated setting; any other is refused. */
export async function removeSetting(db: Database, key: string): Promise<void> {
  const row = await deleteDeprecatedSetting(db, key);
  if (!row) throw new ApiError(404, settingNotFound(key));
  if (row.flag !== SettingFlag.DEPRECATED) throw new ApiError(400, notDeprecated(key));
}

/** A new random permanent token, saved; the old one stops working at once. */
export async function resetPermanentToken(db: Database): Promise<string> {
  const token = newPermanentToken();
  await saveSettingValues(db, [{ key: "token", value: token }]);
  return token;
}

/** The admin's chosen permanent token, saved if it can be used. */
export async function setPermanentToken(db: Database, token: string): Promise<string> {
  const problem = permanentTokenProblem(token);
  if (problem) throw new ApiError(400, tokenRefused(problem));
  await saveSettingValues(db, [{ key: "token", value: token }]);
  return token;
}

/** Saves aria2's URI and secret, then asks it for its version (a 500 naming the cause when it does not answer). */
export async function setAria2(db: Database, uri: string, secret: string): Promise<string> {
  const endpoint = parseAria2Uri(uri);
  await saveSettingValues(db, [
    { key: "aria2_uri", value: uri },
    { key: "aria2_secret", value: secret },
  ]);
  return aria2VersionReply(await aria2Version(endpoint, secret));
}

/** Saves qBittorrent's Web UI URL and seed time, then signs in to check them (a 500 naming the cause when that fails). */
export async function setQbittorrent(db: Database, url: string, seedtime: string): Promise<void> {
  const webUi = parseQbittorrentUrl(url);
  await saveSettingValues(db, [
    { key: "qbittorrent_url", value: url },
    { key: "qbittorrent_seedtime", value: seedtime },
  ]);
  await checkQbittorrent(webUi);
}

/** Saves Transmission's RPC URI and seed time, then asks for its version (a 500 naming the cause when that fails). */
export async function setTransmission(db: Database, uri: string, seedtime: string): Promise<void> {
  const rpc = parseTransmissionUri(uri);
  await saveSettingValues(db, [
    { key: "transmission_uri", value: uri },
    { key: "transmission_seedtime", value: seedtime },
  ]);
  await new TransmissionClient(rpc).version();
}

/**
 * The web UI's cloud-drive offline-download tools, by route, with the tool's name (OpenList's
 * internal/offline_download/*: each `Name()`): every one hands its downloads to its drive's storage
 * driver, which Gatehouse does not have, so each answers one refusal (docs/decisions.md D18.4).
 */
export const CLOUD_DRIVE_TOOLS = {
  set_115: "115 Cloud",
  set_115_open: "115 Open",
  set_123_pan: "123Pan",
  set_123_open: "123 Open",
  set_pikpak: "PikPak",
  set_thunder: "Thunder",
  set_thunder_browser: "ThunderBrowser",
  set_thunderx: "ThunderX",
  set_guangyapan: "GuangYaPan",
} as const;

export function refuseCloudTool(tool: string): never {
  throw new ApiError(400, cloudToolUnavailable(tool));
}

/**
 * The rows the settings page shows after "reset to default" (OpenList's setting/default: the
 * defaults are answered, nothing is written; the page's Save writes them): a setting the admin may
 * change shows its default value; a read-only one, one whose default is drawn per install (the
 * permanent token), and one Gatehouse does not define keep the stored row (docs/decisions.md D18.3).
 */
export function defaultRows(rows: readonly SettingRow[]): SettingRow[] {
  return rows.map((row) => {
    const definition: SettingDefinition | undefined = settingDefinitionByKey.get(row.key);
    const keeps =
      !definition || row.flag === SettingFlag.READONLY || row.flag === SettingFlag.DEPRECATED || row.key === "token";
    return keeps ? row : { ...row, value: definition.value };
  });
}
