// The Worker's bindings and the configuration read from them. The cron trigger and the scripts use
// it without the HTTP app, so it imports nothing of the app.

/** Worker bindings: `[vars]` in wrangler.toml, and secrets set with `wrangler secret put`. */
export interface Env {
  /** Secret. Signs login tokens (HS256); at least 32 characters. */
  JWT_SECRET?: string;
  /**
   * Secret, recommended. Seals TOTP secrets at rest; independent of JWT_SECRET so that rotating
   * the JWT key does not make two-factor secrets unreadable. At least 32 characters.
   */
  OTP_ENCRYPTION_KEY?: string;
  /** Secret. libsql://… (Turso), https://… (sqld) or the local endpoint's http://127.0.0.1:… */
  TURSO_DATABASE_URL?: string;
  /** Secret. Turso database token; empty for the local endpoint. */
  TURSO_AUTH_TOKEN?: string;
  /** The web UI's files (wrangler.toml [assets]); absent in Node unit tests. */
  ASSETS?: Fetcher;
  /**
   * The R2 bucket of the default storage (wrangler.toml [[r2_buckets]]); an "R2 Binding" storage may
   * name any other bucket binding. Absent in Node unit tests and in deploys without R2.
   */
  BUCKET?: R2Bucket;
  /**
   * The background tasks' queue (wrangler.toml [[queues.producers]]); its consumer is this Worker's
   * `queue` handler. Absent in Node unit tests.
   */
  TASK_QUEUE?: Queue<{ id: number; ticket: number }>;
  /** Size of the parts a big file is copied or downloaded in, in bytes (at least the storage's minimum). */
  TASK_PART_BYTES?: string;
  /** How often a running task unit beats, in ms (default 2000; tests beat faster). */
  TASK_HEARTBEAT_MS?: string;
  /** A running task unit's lease, in ms (default 120000): past it without a heartbeat, the sweep restarts it. */
  TASK_LEASE_MS?: string;
  /** Most small files a copy puts in one unit (default 50; a Free-plan deploy needs fewer, D23.1). */
  TASK_GROUP_FILES?: string;
  /**
   * Opt-in: the loopback, private and link-local hosts an offline download may reach (`*`: all of
   * them; a comma-separated list: those). Unset or empty, the default: none (docs/configuration.md).
   */
  OFFLINE_DOWNLOAD_PRIVATE_HOSTS?: string;
  /**
   * Opt-in: the host name under which the S3 endpoint also answers virtual-hosted-style requests,
   * `<bucket>.<S3_VIRTUAL_HOST>` (e.g. `s3.example.com`). Unset, the default: path-style `/s3` only.
   */
  S3_VIRTUAL_HOST?: string;
  TOKEN_EXPIRES_IN_HOURS?: string;
  MAX_BODY_BYTES?: string;
  /**
   * debug | info | warn | error | off. `info` logs every request (one JSON line); `warn`, the
   * production default in wrangler.toml, only refusals and failures (Cloudflare's invocation log
   * records every request already); `error`, only failures. npm start uses `info`.
   */
  LOG_LEVEL?: string;
  /**
   * "true" only where Cloudflare sets CF-Connecting-IP (production, wrangler.toml). Otherwise the
   * client's address is unknown and every caller counts as one address for the sign-in lockout.
   */
  TRUST_CF_CONNECTING_IP?: string;
}

const MIN_JWT_SECRET_LENGTH = 32;

/**
 * A binding is missing or malformed. Not an HTTP error: the cron trigger meets it too; the HTTP
 * layer (http/on-error.ts) answers it as a 500 that says what to set.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}

const LOG_LEVELS = ["debug", "info", "warn", "error", "off"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  tokenTtlSeconds: number;
  maxBodyBytes: number;
  /** The least severe log line written: an index into LOG_LEVELS. */
  logLevel: number;
  /** Background tasks' sizes and clocks, from the `TASK_*` vars (docs/configuration.md). */
  tasks: { partBytes: number; groupFiles: number; heartbeatMs: number; leaseMs: number };
}

/** Parsed once per set of bindings (an isolate keeps its env), not on every request. */
const configs = new WeakMap<Env, Config>();

/** Non-secret configuration with its defaults. Bad values fail loudly rather than fall back. */
export function readConfig(env: Env): Config {
  let config = configs.get(env);
  if (!config) {
    const level = (env.LOG_LEVEL || "warn").toLowerCase();
    if (!(LOG_LEVELS as readonly string[]).includes(level))
      throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`);
    config = {
      tokenTtlSeconds: positiveNumber(env.TOKEN_EXPIRES_IN_HOURS, 48, "TOKEN_EXPIRES_IN_HOURS") * 3600,
      maxBodyBytes: positiveNumber(env.MAX_BODY_BYTES, 1024 * 1024, "MAX_BODY_BYTES"),
      logLevel: LOG_LEVELS.indexOf(level as LogLevel),
      tasks: {
        partBytes: positiveInteger(env.TASK_PART_BYTES, 64 * 1024 * 1024, "TASK_PART_BYTES"),
        groupFiles: positiveInteger(env.TASK_GROUP_FILES, 50, "TASK_GROUP_FILES"),
        heartbeatMs: positiveInteger(env.TASK_HEARTBEAT_MS, 2_000, "TASK_HEARTBEAT_MS"),
        leaseMs: positiveInteger(env.TASK_LEASE_MS, 2 * 60_000, "TASK_LEASE_MS"),
      },
    };
    if (typeof env === "object" && env !== null) configs.set(env, config);
  }
  return config;
}

/** Whether lines of `level` are written under this configuration. */
export const logs = (config: Config, level: Exclude<LogLevel, "off">) => LOG_LEVELS.indexOf(level) >= config.logLevel;

/** The last secret encoded: the guard asks on every request, and the token key is kept by these bytes. */
let encodedSecret: { text: string; bytes: Uint8Array } | undefined;

/** The JWT key. There is no built-in fallback: a missing or short secret is a configuration error. */
export function jwtSecret(env: Env): Uint8Array {
  const secret = env.JWT_SECRET ?? "";
  if (secret.length < MIN_JWT_SECRET_LENGTH) {
    throw new ConfigError(
      `JWT_SECRET must be set to at least ${MIN_JWT_SECRET_LENGTH} characters (wrangler secret put JWT_SECRET)`,
    );
  }
  if (encodedSecret?.text !== secret) encodedSecret = { text: secret, bytes: new TextEncoder().encode(secret) };
  return encodedSecret.bytes;
}

/**
 * Keys that seal TOTP secrets, the one to seal with first: OTP_ENCRYPTION_KEY when set, then
 * JWT_SECRET, which sealed them before OTP_ENCRYPTION_KEY existed (and still does without it).
 */
export function otpSealingKeys(env: Env): Uint8Array[] {
  const fallback = jwtSecret(env);
  if (!env.OTP_ENCRYPTION_KEY) return [fallback];
  if (env.OTP_ENCRYPTION_KEY.length < MIN_JWT_SECRET_LENGTH) {
    throw new ConfigError(`OTP_ENCRYPTION_KEY must be at least ${MIN_JWT_SECRET_LENGTH} characters`);
  }
  return [new TextEncoder().encode(env.OTP_ENCRYPTION_KEY), fallback];
}

export function databaseUrl(env: Env): { url: string; authToken?: string | undefined } {
  if (!env.TURSO_DATABASE_URL)
    throw new ConfigError("TURSO_DATABASE_URL is not set (wrangler secret put TURSO_DATABASE_URL)");
  return { url: env.TURSO_DATABASE_URL, authToken: env.TURSO_AUTH_TOKEN };
}

function positiveNumber(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number, got "${raw}"`);
  return value;
}

function positiveInteger(raw: string | undefined, fallback: number, name: string): number {
  const value = positiveNumber(raw, fallback, name);
  if (!Number.isSafeInteger(value)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  return value;
}
