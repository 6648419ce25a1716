// The texts the WebDAV server answers, each defined once: the plain-text bodies of its refusals,
// the RFC 4918 precondition elements of its XML ones, and the reason phrases of multistatus lines.
// The words it shares with /api/fs (access denied, permission denied, invalid name) are the file
// side's, imported from src/features/fs/messages.ts.

// ---- Sign-in (auth.ts)

export const SIGN_IN_NEEDED = "sign in with your username and password, or an app password";

/** The refusal of an account password when two-factor is on: only app passwords get past it. */
export const TWO_FACTOR_NEEDS_APP_PASSWORD =
  "this account has two-factor authentication on: sign in to WebDAV with an app password (Profile → App passwords, or POST /api/me/app_password/create)";

/** The challenge of a 401, so clients ask for a username and password. */
export const BASIC_CHALLENGE = 'Basic realm="Gatehouse WebDAV", charset="UTF-8"';

/** A fault of the server (500), and the database unable to serve for now (503). */
export const SERVER_FAILED = "internal error";
export const SERVER_BUSY = "the database is not answering now, try again later";

// ---- The request (rules.ts)

export const methodNotAnswered = (method: string) => `${method} is not a WebDAV method this server answers`;
export const FRAGMENT_REFUSED = "a request URI cannot carry a #fragment";
export const CONTROL_CHARACTERS = "the path holds control characters";
export const depthInvalid = (header: string) =>
  `Depth must be 0, 1 or infinity, not ${JSON.stringify(header.slice(0, 32))}`;
export const DESTINATION_MISSING = "Destination header missing";
export const DESTINATION_NOT_URL = "Destination is not a URL";
export const DESTINATION_ELSEWHERE = "Destination is on another server";
export const destinationOutside = (prefix: string) => `Destination is outside ${prefix}`;
export const OVERWRITE_INVALID = "Overwrite must be T or F";
export const LOCK_TOKEN_MISSING = "Lock-Token header missing";
export const CONTENT_LENGTH_NEEDED = "PUT needs a Content-Length: the storages take a file's length before its bytes";

// ---- The If header (rules.ts)

export const ifCloseMissing = (end: string) => `If header: ${end} missing`;
export const IF_TAG_AFTER_UNTAGGED = "If header: a resource tag after an untagged list";
export const IF_TAG_WITHOUT_LIST = "If header: a resource tag without a list";
export const IF_EXPECTED_LIST = "If header: expected (";
export const IF_LIST_UNCLOSED = "If header: ) missing";
export const IF_EXPECTED_CONDITION = "If header: expected a state token or an entity tag";
export const IF_EMPTY_LIST = "If header: an empty list";
export const IF_FAILED = "the If header's conditions do not hold";

// ---- Permissions (rules.ts)

export const NO_READ_PERMISSION = "no WebDAV read permission here";
export const NO_MANAGE_PERMISSION = "no WebDAV manage permission here";

// ---- Methods (read.ts, properties.ts, write.ts, transfer.ts, locks.ts)

export const NOT_FOUND = "not found";
export const notAFolder = (view: string) => `${view} is not a folder`;
export const NO_STORAGE_HERE = "no storage is mounted here";
export const isLocked = (view: string) => `${view} is locked`;
export const PROPFIND_NOT_PROPFIND = "the body is not a DAV:propfind";
export const PROPFIND_EMPTY = "DAV:propfind is empty";
export const PROPFIND_UNKNOWN = "DAV:propfind holds neither prop, allprop nor propname";
export const PROPFIND_INFINITY = "PROPFIND with Depth: infinity is not served; ask for Depth 0 or 1";
export const PROPPATCH_NOT_UPDATE = "the body is not a DAV:propertyupdate";
export const PROPPATCH_UNKNOWN = "DAV:propertyupdate holds only set and remove";
export const withoutProp = (action: string) => `DAV:${action} without DAV:prop`;
export const MKCOL_BODY = "MKCOL takes no body";
export const ALREADY_EXISTS = "something already exists here";
export const PUT_ON_FOLDER = "a folder cannot be overwritten by PUT";
export const FILE_EXISTS = "the file exists";
export const IF_MATCH_FAILED = "If-Match does not hold";
export const DELETE_DEPTH = "DELETE of a folder takes Depth: infinity";
export const STORAGE_ROOT_REMOVE = "a storage's root is removed on the storages page";
export const transferDepth = (method: "COPY" | "MOVE") =>
  `${method} takes Depth: ${method === "MOVE" ? "infinity" : "0 or infinity"}`;
export const SAME_SOURCE_AND_DESTINATION = "the source and the destination are the same";
export const intoItself = (method: "COPY" | "MOVE") => `cannot ${method.toLowerCase()} a folder into itself`;
export const DESTINATION_EXISTS = "the destination exists and Overwrite is F";
export const NO_LOCK_IN_IF = "no lock of this resource is named in the If header";
export const LOCK_OF_ANOTHER = "the lock belongs to another user";
export const LOCK_EXPIRED = "the lock has expired";
export const LOCK_NOT_LOCKINFO = "the body is not a DAV:lockinfo";
export const LOCK_DEPTH = "LOCK takes Depth: 0 or infinity";
export const LOCK_SCOPE_UNKNOWN = "DAV:lockscope is neither exclusive nor shared";
export const WRITE_LOCKS_ONLY = "only write locks exist";
export const NO_SUCH_LOCK = "no such lock on this resource";

// ---- Bodies (request.ts, xml.ts)

export const malformedXml = (reason: string) => `malformed XML: ${reason}`;
export const BODY_NOT_UTF8 = "the body is not UTF-8";
export const xmlBodyTooLarge = (limit: number) => `XML bodies are limited to ${limit} bytes`;
export const DOCTYPE_REFUSED = "DOCTYPE is not accepted";
export const NO_ROOT_ELEMENT = "no root element";

// ---- RFC 4918 preconditions (§16): the element inside a refusal's DAV:error

export const lockTokenSubmitted = (href: string) =>
  `<D:lock-token-submitted><D:href>${href}</D:href></D:lock-token-submitted>`;
export const PROPFIND_FINITE_DEPTH = "<D:propfind-finite-depth/>";
export const CANNOT_MODIFY_PROTECTED_PROPERTY = "<D:cannot-modify-protected-property/>";
export const LOCK_TOKEN_MATCHES_REQUEST_URI = "<D:lock-token-matches-request-uri/>";
export const NO_CONFLICTING_LOCK = "<D:no-conflicting-lock/>";

// ---- Status lines of a multistatus (xml.ts)

export const REASON_PHRASES: Record<number, string> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  412: "Precondition Failed",
  423: "Locked",
  424: "Failed Dependency",
  500: "Internal Server Error",
  502: "Bad Gateway",
  507: "Insufficient Storage",
};
