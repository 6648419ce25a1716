// The Worker's own bindings (wrangler.toml), for drivers that reach their storage through one
// instead of a network address: R2 Binding. The Worker entry hands them over on every request and
// cron run (src/index.ts); an isolate's bindings never change, so the file side and the checks read
// them here rather than having the env passed through every call (docs/decisions.md D7.1).

let current: Readonly<Record<string, unknown>> = {};

/** Called by the Worker entry with the env it was given. */
export function useBindings(env: object): void {
  current = env as Record<string, unknown>;
}

/** The R2 bucket bound under `name`, or null when the Worker has no such binding (or it is not a bucket). */
export function r2Bucket(name: string): R2Bucket | null {
  const value = current[name];
  const bucket = value as Partial<R2Bucket> | undefined;
  return typeof value === "object" &&
    value !== null &&
    typeof bucket?.list === "function" &&
    typeof bucket.head === "function" &&
    typeof bucket.createMultipartUpload === "function"
    ? (value as R2Bucket)
    : null;
}
