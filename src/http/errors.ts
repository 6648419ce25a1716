import { isUniqueViolation } from "../db/errors.ts";

/**
 * Envelope codes, as AList clients read them (docs/decisions.md D3.1). The HTTP status stays 200: the web UI
 * and scripts read `code`, and treat a non-2xx status as a transport failure.
 */
export type ApiCode = 200 | 400 | 401 | 402 | 403 | 404 | 405 | 413 | 429 | 500;

/** The one error type. Thrown anywhere in a request; `onError` turns it into the envelope. */
export class ApiError extends Error {
  constructor(
    readonly code: Exclude<ApiCode, 200>,
    message: string,
    /** Payload carried by a failure; AList's storage create reports `{id}` even when it fails. */
    readonly data: unknown = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * The one way a write refuses a duplicate: runs it, and turns a UNIQUE violation into a 400 with
 * `message`. A write is one statement or one batch (one transaction), so nothing was saved then.
 */
export async function refuseDuplicate<T>(message: string, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError(400, message);
    throw error;
  }
}
