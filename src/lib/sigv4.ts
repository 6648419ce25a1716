// AWS Signature Version 4's arithmetic, for both sides: the S3 endpoint checks signatures with it
// (src/features/s3/sigv4.ts, docs/decisions.md D22.2) and the S3 driver signs and presigns its
// requests with it (src/drivers/s3-files.ts, D27.2). The canonical request (method, URI, sorted
// query, signed headers, payload hash), the string to sign, the key derived from the secret, the
// date and the scope, and an HMAC-SHA256 over it with WebCrypto.

export const ALGORITHM = "AWS4-HMAC-SHA256";
export const UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";

/** The date (`YYYYMMDD`), region and service a signature is scoped to. */
export interface SigningScope {
  date: string;
  region: string;
  service: string;
}

/** RFC 3986 encoding as SigV4 asks: everything but `A-Za-z0-9-._~` is `%XX` (and `/` with `keepSlash`). */
function uriEncode(value: string, keepSlash = false): string {
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    const ch = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(ch) || (keepSlash && ch === "/")) out += ch;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A raw path segment decoded, or the raw text when it is not valid percent-encoding. */
const decodeSegment = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** S3's canonical URI: the path as sent, each segment decoded and encoded once (S3 never double-encodes). */
export const canonicalUri = (rawPath: string) =>
  rawPath
    .split("/")
    .map((segment) => uriEncode(decodeSegment(segment)))
    .join("/");

/** The canonical query string: each name and value encoded, sorted by name then value. */
export function canonicalQuery(rawQuery: string): string {
  const pairs: [string, string][] = [];
  for (const part of rawQuery.replace(/^\?/, "").split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = decodeSegment((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, " "));
    const value = eq < 0 ? "" : decodeSegment(part.slice(eq + 1).replace(/\+/g, " "));
    pairs.push([uriEncode(name), uriEncode(value)]);
  }
  pairs.sort(([k1, v1], [k2, v2]) => (k1 < k2 ? -1 : k1 > k2 ? 1 : v1 < v2 ? -1 : v1 > v2 ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join("&");
}

/** The request's parts the signature covers. */
export interface SignedRequest {
  method: string;
  rawPath: string;
  rawQuery: string;
  /** A header's value by lowercase name; `host` falls back to the URL's. */
  header: (name: string) => string | undefined;
  payloadHash: string;
}

function canonicalRequest(request: SignedRequest, signedHeaders: readonly string[]): string {
  const headers = signedHeaders
    .map((name) => `${name}:${(request.header(name) ?? "").trim().replace(/\s+/g, " ")}\n`)
    .join("");
  return [
    request.method,
    canonicalUri(request.rawPath),
    canonicalQuery(request.rawQuery),
    headers,
    signedHeaders.join(";"),
    request.payloadHash,
  ].join("\n");
}

const encoder = new TextEncoder();

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

async function hmac(key: ArrayBuffer | Uint8Array, data: string): Promise<ArrayBuffer> {
  const imported = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return crypto.subtle.sign("HMAC", imported, encoder.encode(data));
}

export const sha256Of = async (text: string) => hex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));

/** The signature of `request` under `secret` with the header's date, region and service. */
export async function signatureOf(
  request: SignedRequest,
  auth: SigningScope & { signedHeaders: readonly string[] },
  amzDate: string,
  secret: string,
): Promise<string> {
  const scope = scopeOf(auth);
  const stringToSign = [ALGORITHM, amzDate, scope, await sha256Of(canonicalRequest(request, auth.signedHeaders))].join(
    "\n",
  );
  return hex(await hmac(await signingKey(secret, auth), stringToSign));
}

/** The credential's scope, `date/region/service/aws4_request`. */
export const scopeOf = (auth: SigningScope) => `${auth.date}/${auth.region}/${auth.service}/aws4_request`;

/** The key derived from the secret for the header's date, region and service. */
export async function signingKey(secret: string, auth: SigningScope): Promise<ArrayBuffer> {
  let key = await hmac(encoder.encode(`AWS4${secret}`), auth.date);
  for (const part of [auth.region, auth.service, "aws4_request"]) key = await hmac(key, part);
  return key;
}

/** The hex SHA-256 of bytes. */
export const sha256Hex = async (bytes: Uint8Array) => hex(await crypto.subtle.digest("SHA-256", bytes as BufferSource));

/** HMAC-SHA256 of `data` under a derived key, hex. */
export const hmacHex = async (key: ArrayBuffer, data: string) => hex(await hmac(key, data));

/** The keys a client signs with, and the region and service its requests are scoped to. */
export interface SigningKeys {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  service: string;
}

/** Headers a signature leaves out unless asked (proxies and clients change them on the way). */
const UNSIGNED_HEADERS = new Set([
  "authorization",
  "content-type",
  "content-length",
  "user-agent",
  "presigned-expires",
  "expect",
  "x-amzn-trace-id",
  "range",
  "connection",
]);

export interface SignOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sign in the query (a presigned URL) instead of the Authorization header. */
  presign?: boolean;
  /** Sign every header given, Content-Length included (a presigned PUT of one exact size). */
  allHeaders?: boolean;
  /** The signing time; now unless given (tests). */
  now?: Date;
}

/**
 * `url` signed with `keys`: in the Authorization header, with `x-amz-date`, the payload's hash
 * (UNSIGNED-PAYLOAD unless `x-amz-content-sha256` is given) and the session token; or, with
 * `presign`, in the query, valid for its `X-Amz-Expires` (a day when absent) from now.
 */
export async function signRequest(
  url: string,
  keys: SigningKeys,
  { method = "GET", headers = {}, presign = false, allHeaders = false, now = new Date() }: SignOptions = {},
): Promise<{ url: string; headers: Headers }> {
  const target = new URL(url);
  const sent = new Headers(headers);
  sent.delete("host");
  const amzDate = now.toISOString().replace(/[:-]|\.\d{3}/g, "");
  const scope = { date: amzDate.slice(0, 8), region: keys.region, service: keys.service };
  if (!presign && !sent.has("x-amz-content-sha256")) sent.set("x-amz-content-sha256", UNSIGNED_PAYLOAD);
  const query = target.searchParams;
  const set = (name: string, value: string) => (presign ? query.set(name, value) : sent.set(name, value));
  set("X-Amz-Date", amzDate);
  if (keys.sessionToken) set("X-Amz-Security-Token", keys.sessionToken);
  const signedHeaders = ["host", ...sent.keys()].filter((name) => allHeaders || !UNSIGNED_HEADERS.has(name)).sort();
  const credential = `${keys.accessKeyId}/${scopeOf(scope)}`;
  if (presign) {
    if (!query.has("X-Amz-Expires")) query.set("X-Amz-Expires", "86400");
    query.set("X-Amz-Algorithm", ALGORITHM);
    query.set("X-Amz-Credential", credential);
    query.set("X-Amz-SignedHeaders", signedHeaders.join(";"));
  }
  const request: SignedRequest = {
    method: method.toUpperCase(),
    rawPath: target.pathname,
    rawQuery: target.search,
    header: (name) => (name === "host" ? target.host : (sent.get(name) ?? undefined)),
    payloadHash: sent.get("x-amz-content-sha256") ?? UNSIGNED_PAYLOAD,
  };
  const signature = await signatureOf(request, { ...scope, signedHeaders }, amzDate, keys.secretAccessKey);
  if (presign) query.set("X-Amz-Signature", signature);
  else
    sent.set(
      "authorization",
      `${ALGORITHM} Credential=${credential}, SignedHeaders=${signedHeaders.join(";")}, Signature=${signature}`,
    );
  return { url: target.toString(), headers: sent };
}
