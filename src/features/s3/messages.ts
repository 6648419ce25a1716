// The texts the S3 endpoint answers, each defined once: S3's error codes with their HTTP statuses
// (Amazon S3 API reference, "Error responses"), and the messages that go with them. The words it
// shares with /api/fs come through as the file side's own messages.

/** S3's error codes this endpoint answers, and the status of each. */
export const S3_ERRORS = {
  AccessDenied: 403,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BucketAlreadyExists: 409,
  BucketNotEmpty: 409,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  IncompleteBody: 400,
  InternalError: 500,
  MalformedTrailerError: 400,
  MalformedXML: 400,
  MaxMessageLengthExceeded: 400,
  MissingContentLength: 411,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NoSuchVersion: 404,
  NotImplemented: 501,
  OperationAborted: 409,
  PreconditionFailed: 412,
  RequestTimeTooSkewed: 403,
  ServiceUnavailable: 503,
  SignatureDoesNotMatch: 403,
  SlowDown: 503,
  XAmzContentSHA256Mismatch: 400,
} as const;
export type S3Code = keyof typeof S3_ERRORS;

// ---- Signing (sigv4.ts, server.ts)

export const SIGN_WITH_SIGV4 =
  "Sign requests with AWS Signature Version 4 in the Authorization header (AWS4-HMAC-SHA256)";
export const PRESIGNED_MALFORMED =
  "Query-string authentication needs X-Amz-Algorithm=AWS4-HMAC-SHA256, X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and X-Amz-Signature";
export const PRESIGNED_TOO_LONG = "X-Amz-Expires must be less than a week (in seconds) that is 604800";
export const PRESIGNED_EXPIRED = "Request has expired";
export const PRESIGNED_NOT_YET_VALID = "Request is not valid yet";
export const STREAMING_UNSUPPORTED =
  "Of the streaming payloads only STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER and STREAMING-UNSIGNED-PAYLOAD-TRAILER, signed in the Authorization header, to PutObject, are supported";
export const NO_SUCH_ACCESS_KEY = "The AWS Access Key Id you provided does not exist in our records.";
export const SIGNATURE_MISMATCH =
  "The request signature we calculated does not match the signature you provided. Check your key and signing method.";
export const DATE_MISSING = "x-amz-date (or Date) is missing or not in the form YYYYMMDDTHHMMSSZ";
export const TIME_SKEWED = "The difference between the request time and the current time is too large.";
export const CONTENT_SHA_MISSING = "x-amz-content-sha256 is missing: S3 requests carry the payload's hash";
export const CONTENT_SHA_MISMATCH = "The provided 'x-amz-content-sha256' header does not match what was computed.";
export const LOCKED_OUT = "Too many failed sign-ins from this address: try again in a few minutes";
export const keyRefused = (why: string) => `The access key is refused: ${why}`;

// ---- Buckets and keys (rules.ts)

export const NO_SUCH_BUCKET = "The specified bucket does not exist";
export const NO_SUCH_KEY = "The specified key does not exist.";
export const RANGE_NOT_SATISFIABLE = "The requested range is not satisfiable";
export const CONTENT_LENGTH_NEEDED = "PutObject needs a Content-Length";
/** S3's NotImplemented: an operation or parameter Gatehouse's endpoint does not serve (docs/s3.md lists what it does). */
export const unsupported = (operation: string) =>
  `${operation} is not supported by Gatehouse's S3 endpoint; docs/s3.md lists what is`;
export const MAX_KEYS_INVALID = "max-keys must be a whole number from 0";
export const CONTINUATION_INVALID = "The continuation token provided is incorrect";
export const ENCODING_TYPE_INVALID = "Invalid Encoding Method specified in Request";
export const BAD_KEY = "The object key is not a path this endpoint can store (an empty, `.` or `..` segment)";
export const PRECONDITION_FAILED = "At least one of the pre-conditions you specified did not hold";
export const FOLDER_THERE = "A folder holds this key's name (or a file its folder's): the mount tree cannot hold both";
export const COPY_SOURCE_INVALID = "x-amz-copy-source must name a bucket and a key: URL-encoded bucket/key";
export const COPY_TO_ITSELF =
  "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.";
export const DELETE_XML_INVALID =
  "The XML you provided was not well-formed or did not validate against our published schema";
export const deleteTooLong = (bytes: number) =>
  `Your request was too big: a DeleteObjects body is at most ${bytes} bytes`;
export const deleteTooMany = (keys: number) => `A DeleteObjects request names at most ${keys} keys`;
export const BUCKET_NAME_INVALID = "The specified bucket is not valid: a folder name (no `/`, not `.` or `..`)";
export const BUCKET_TAKEN = "The requested bucket name is taken by a file at the top of the key's folder";
export const BUCKET_NOT_EMPTY = "The bucket you tried to delete is not empty";
export const ACCESS_DENIED = "Access Denied";
export const CHUNKED_MALFORMED =
  "The aws-chunked body is not in the form <hex size>;chunk-signature=<signature> CRLF <bytes> CRLF";
export const CHUNK_TOO_LARGE = "An aws-chunked chunk is larger than this endpoint holds for its check (16 MiB)";
export const CHUNK_SIGNATURE_MISMATCH =
  "The chunk signature we calculated does not match the signature you provided: the upload is discarded.";
export const CHUNKED_LENGTH = "The aws-chunked body's bytes are not x-amz-decoded-content-length";
export const DECODED_LENGTH_NEEDED = "A streaming (aws-chunked) upload needs x-amz-decoded-content-length";
export const TRAILER_MALFORMED =
  "The request contained trailing data that was not well-formed or did not conform to our published schema.";
export const TRAILER_SIGNATURE_MISMATCH =
  "The trailer signature we calculated does not match the x-amz-trailer-signature you provided: the upload is discarded.";
export const trailerMissing = (name: string) => `The x-amz-trailer named ${name}, which the trailer does not hold`;
export const TRAILER_UNSUPPORTED =
  "x-amz-trailer must name one checksum: x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1 or -sha256";
export const checksumInvalid = (name: string) => `Value for ${name} header is invalid.`;
export const checksumMismatch = (name: string) =>
  `The ${name.replace("x-amz-checksum-", "").toUpperCase()} you specified did not match the calculated checksum.`;
export const CHECKSUMS_MANY = "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.";

// ---- Multipart uploads (multipart.ts)

export const NO_SUCH_UPLOAD =
  "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.";
export const PART_NUMBER_INVALID = "Part number must be an integer between 1 and 10000, inclusive";
export const PART_LENGTH_NEEDED = "UploadPart needs a Content-Length";
export const partEndedEarly = (bytes: number) => `The part's body ended before its ${bytes} bytes (Content-Length)`;
export const partTooLong = (bytes: number) => `The part's body ran past its ${bytes} bytes (Content-Length)`;
export const partTooLarge = (bytes: number) => `A part is at most ${bytes} bytes`;
export const INVALID_PART =
  "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.";
export const partsWithGap = (expected: number) =>
  `The parts must be numbered 1, 2, 3, ... without a gap here: part ${expected} is missing from the list`;
export const INVALID_PART_ORDER = "The list of parts was not in ascending order. Parts must be ordered by part number.";
export const entityTooSmall = (part: number, bytes: number) =>
  `Your proposed upload is smaller than the minimum allowed size: part ${part} is not the last and is under ${bytes} bytes`;
export const COMPLETE_XML_INVALID =
  "The XML you provided was not well-formed or did not validate against our published schema: CompleteMultipartUpload lists Part elements with PartNumber and ETag";
export const completeTooLong = (bytes: number) =>
  `Your request was too big: a CompleteMultipartUpload body is at most ${bytes} bytes`;
export const UPLOAD_COMPLETING = "The upload is being completed by another request";
export const MAX_PARTS_INVALID = "max-parts and max-uploads must be whole numbers from 0";
export const MULTIPART_OFF = "Multipart uploads are disabled on this server (the multipart_enabled setting)";
