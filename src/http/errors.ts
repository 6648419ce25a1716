import { isUniqueViolation } from "../db/errors.ts";

/**
 * Envelope codes, as AList clients read them (docs/decisions.md D3.1). The HTTP status stays 200: the web UI
 * and scripts read `code`, and treat a non-2xx status as a transport failure.
 */
export type ApiCode = 200 | 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 429 | 500;

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
 * What went wrong on the file side (/api/fs, /d, /p and WebDAV). A kind is all a protocol needs to
 * answer: the API's envelope code is `envelopeCodeOf(kind)`, WebDAV's status `davStatusOf(kind)`
 * (src/features/dav/rules.ts); neither reads the message.
 */
export type FileErrorKind =
  /** The object is not there. */
  | "not_found"
  /** No storage serves the path. */
  | "no_storage"
  /** A folder was needed and something else is there. */
  | "not_a_folder"
  /** A file was needed and a folder is there. */
  | "not_a_file"
  /** Something is already there. */
  | "exists"
  /** The storage's driver has no such operation. */
  | "not_implemented"
  /** The storage or the file side forbids it (a read-only storage, a storage's root moved). */
  | "forbidden"
  /** The storage failed or could not be reached. */
  | "upstream"
  /** The storage cannot serve at all: its driver is unknown or not built for the edge, its check failed, its aliases loop. */
  | "unavailable"
  /** Gatehouse declines it (a copy over its limit, a storage's root deleted here), answered as AList answers a failure. */
  | "refused";

/**
 * Per kind: the envelope code (AList answers every file failure with 500, a refusal with 403), and
 * whether it answers the request as it stands (nothing there, nothing mounted, not allowed) rather
 * than reporting something broken. The access log writes the former at `warn` whatever their code:
 * a fresh install's "please add a storage first" is no server failure.
 */
const KINDS: Record<FileErrorKind, { code: 403 | 500; expected: boolean }> = {
  not_found: { code: 500, expected: true },
  no_storage: { code: 500, expected: true },
  not_a_folder: { code: 500, expected: true },
  not_a_file: { code: 500, expected: true },
  exists: { code: 500, expected: true },
  not_implemented: { code: 500, expected: true },
  forbidden: { code: 403, expected: true },
  refused: { code: 500, expected: true },
  upstream: { code: 500, expected: false },
  unavailable: { code: 500, expected: false },
};

const envelopeCodeOf = (kind: FileErrorKind): 403 | 500 => KINDS[kind].code;
export const isExpectedAnswer = (kind: FileErrorKind): boolean => KINDS[kind].expected;

/**
 * A file-side failure, thrown by drivers and the file layer alike: an ApiError (so the API answers it
 * as any other, with the code of its kind) that WebDAV answers by its kind.
 */
export class FileError extends ApiError {
  override name = "FileError";
  constructor(
    readonly kind: FileErrorKind,
    message: string,
    /**
     * The mount tree has put its words on it (a `failed link: ` prefix, say): an Alias's outer tree
     * passes its target's failure on as it is. A driver's own failure is not worded yet.
     */
    readonly worded = false,
  ) {
    super(envelopeCodeOf(kind), message);
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
