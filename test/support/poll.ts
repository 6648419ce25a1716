// Waiting for what ends on its own (a task, a scan, a build), in any vitest project: no runtime imports.

/**
 * Calls `read` every `everyMs` until `until` holds for what it answers, and returns that answer;
 * fails naming `what` and the last answer after `timeoutMs` (for tasks, builds and scans that end on their own).
 */
export async function poll<T>(
  read: () => Promise<T>,
  until: (value: T) => boolean,
  { timeoutMs = 10_000, everyMs = 50, what = "done" }: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((resolve) => setTimeout(resolve, everyMs))) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms: ${JSON.stringify(value)}`);
  }
}
