/**
 * Envelope codes, as AList clients read them (DECISIONS §3). The HTTP status stays 200: the web UI
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
