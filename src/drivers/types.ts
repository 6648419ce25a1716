// What a driver is: its template (config, additional items) as AList v3.58 publishes it, and the
// check that tells whether a storage configured with it can work (reference §10, §12.1).

/** One field of a driver template; all six keys always present, strings "" when empty (§10.1). */
export interface DriverItem {
  name: string;
  type: "string" | "number" | "text" | "select" | "bool";
  default: string;
  options: string;
  required: boolean;
  help: string;
}

export interface DriverConfig {
  name: string;
  local_sort: boolean;
  only_local: boolean;
  only_proxy: boolean;
  no_cache: boolean;
  no_upload: boolean;
  need_ms: boolean;
  default_root: string;
  alert: string;
}

/** A storage another one can point into (Alias paths, Crypt's remote_path). */
export interface MountedStorage {
  id: number;
  mountPath: string;
  disabled: boolean;
  status: string;
}

export interface CheckContext {
  /** Aborts when the check's time is up; checks hand it to fetch and close their sockets on it. */
  signal: AbortSignal;
  /** The time the check has, for its messages. */
  timeoutMs: number;
  /** For drivers that point into other storages: those mounted on or above the paths they point to. */
  storages: MountedStorage[];
}

/** A storage's `addition` read through its driver's template: missing keys take the item's default. */
export interface Addition {
  text(name: string): string;
  flag(name: string): boolean;
}

export interface Driver {
  config: DriverConfig;
  /** AList's hidden `proxy_range` option: adds the common item of that name (reference §10.2). */
  proxyRangeOption?: boolean;
  additional: DriverItem[];
  /** The paths of other storages this one shows (Alias, Crypt); the check gets the storages mounted on or above them. */
  pointsInto?(addition: Addition): string[];
  /** Resolves when a storage with this addition can work; otherwise throws an error a person can act on. */
  check(addition: Addition, context: CheckContext): Promise<void>;
}

/** A check's verdict on a storage: the message becomes its `status`. */
export class CheckFailed extends Error {
  override name = "CheckFailed";
}
