// What the file side knows for one request, as types only: the request context names it without
// importing the queries (store.ts) or the guard they run with.
import type { metas } from "../../db/schema.ts";
import type { StorageRow, VirtualFolder } from "./tree.ts";

/** A row of `metas` (rules.ts decides what it says at a path). */
export type MetaRow = typeof metas.$inferSelect;

export interface FsSettings {
  token: string;
  signAll: boolean;
  /** Hours; 0 = signs never expire. */
  linkExpirationHours: number;
  proxyTypes: Set<string>;
  textTypes: Set<string>;
  audioTypes: Set<string>;
  videoTypes: Set<string>;
  imageTypes: Set<string>;
  filterReadmeScripts: boolean;
  siteUrl: string;
  searchIndex: string;
  /** Gatehouse's own writes update the search index (when it exists). */
  autoUpdateIndex: boolean;
  /** The stored `index_progress` (features/search/rules.ts progressOf). */
  indexProgress: string;
  ignorePaths: string;
  forwardDirectLinkParams: boolean;
  ignoreDirectLinkParams: Set<string>;
  /** Archives inside share links may be browsed and their entries opened (docs/decisions.md D14.8). */
  shareArchivePreview: boolean;
}

/** Where a path's storage comes from: the storages on its chain; and the virtual folders of a folder. */
export interface TreeRows {
  /** Enabled storages whose mount path is on the chain of a loaded path. */
  storages: StorageRow[];
  /** Paths whose chain has been read: a path is covered when each of its ancestors is. */
  chains: Set<string>;
  /** The virtual folders of each folder read. */
  virtual: Map<string, VirtualFolder[]>;
  /** Paths asked about on their own: the virtual folder a path is (a mount point or above one), or null. */
  points: Map<string, VirtualFolder | null>;
}

/** What the file side knows for one request: the tree read so far, the metas and the settings. */
export interface FsState {
  tree: TreeRows;
  metas: MetaRow[];
  settings: FsSettings;
}

/**
 * The paths a request will resolve, the folders it will list (their virtual folders), and the
 * paths it will look up on their own (`points`: is it a virtual folder? One row each, however many
 * siblings it has).
 */
export interface TreeNeeds {
  paths: string[];
  folders: string[];
  points?: string[];
}

/** What sits at a path in the mount tree: a storage's mount point, a folder above one, or neither. */
export type MountsAt = "mount point" | "above a mount point" | null;
