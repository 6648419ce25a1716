// AWS Signature Version 4 as S3 checks it in the Authorization header (docs/decisions.md D22.2) or a
// presigned URL's query (D22.5):
// the headers and the query parsed, the signature computed with the arithmetic both sides share
// (src/lib/sigv4.ts) and compared. Which key, and whether the request may go on, are the server's
// (server.ts) and the rules' (rules.ts).
import { constantTimeEqual } from "../../auth/password.ts";
import { ALGORITHM, type SignedRequest, type SigningScope, signatureOf } from "../../lib/sigv4.ts";

/** How far a request's `x-amz-date` may be from the server's clock, as S3 allows: 15 minutes. */
export const MAX_SKEW_SECONDS = 15 * 60;

/** What the Authorization header says. */
export interface Authorization extends SigningScope {
  accessKeyId: string;
  signedHeaders: string[];
  signature: string;
}

/** The header's parts, or null when it is not an `AWS4-HMAC-SHA256` header of the right shape. */
export function parseAuthorization(header: string): Authorization | null {
  const match = /^AWS4-HMAC-SHA256\s+(.*)$/s.exec(header.trim());
  if (!match) return null;
  const fields = new Map<string, string>();
  for (const part of match[1]!.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) return null;
    fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get("Credential")?.split("/");
  const signedHeaders = fields.get("SignedHeaders");
  const signature = fields.get("Signature");
  if (credential?.length !== 5 || credential[4] !== "aws4_request" || !signedHeaders || !signature) return null;
  const [accessKeyId, date, region, service] = credential as [string, string, string, string];
  if (!/^\d{8}$/.test(date) || !/^[0-9a-f]{64}$/.test(signature)) return null;
  return { accessKeyId, date, region, service, signedHeaders: signedHeaders.split(";"), signature };
}

/** How long a presigned URL may live, as S3 allows: 7 days. */
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 60 * 60;

/** What a presigned URL's query says: the Authorization's parts, its `X-Amz-Date` and `X-Amz-Expires`. */
export interface QueryAuthorization extends Authorization {
  amzDate: string;
  /** Seconds from `amzDate`, as sent (not yet held to the 7 days). */
  expires: number;
}

/**
 * A presigned URL's parts (query string authentication, D22.5), or null when the query does not
 * carry `X-Amz-Algorithm=AWS4-HMAC-SHA256` with a credential, a date, signed headers, a signature
 * and a whole number of seconds.
 */
export function parseQueryAuthorization(query: URLSearchParams): QueryAuthorization | null {
  if (query.get("X-Amz-Algorithm") !== ALGORITHM) return null;
  const credential = query.get("X-Amz-Credential") ?? "";
  const signedHeaders = query.get("X-Amz-SignedHeaders") ?? "";
  const signature = query.get("X-Amz-Signature") ?? "";
  const amzDate = query.get("X-Amz-Date") ?? "";
  const expires = query.get("X-Amz-Expires") ?? "";
  const auth = parseAuthorization(
    `${ALGORITHM} Credential=${credential},SignedHeaders=${signedHeaders},Signature=${signature}`,
  );
  if (!auth || amzDateSeconds(amzDate) === null || !/^\d{1,9}$/.test(expires)) return null;
  return { ...auth, amzDate, expires: Number(expires) };
}

/** The raw query without its `X-Amz-Signature`, the one parameter a presigned URL's signature cannot cover. */
export const withoutSignature = (rawQuery: string) =>
  rawQuery
    .replace(/^\?/, "")
    .split("&")
    .filter((part) => part.split("=")[0] !== "X-Amz-Signature")
    .join("&");

/** `x-amz-date` (`YYYYMMDDTHHMMSSZ`) as unix seconds, or null. */
export function amzDateSeconds(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

const encoder = new TextEncoder();

/** Whether the header's signature is the one `secret` gives, compared in constant time. */
export async function signatureMatches(
  request: SignedRequest,
  auth: Authorization,
  amzDate: string,
  secret: string,
): Promise<boolean> {
  for (const candidate of acceptEncodings(request, auth)) {
    const expected = await signatureOf(candidate, auth, amzDate, secret);
    if (constantTimeEqual(encoder.encode(expected), encoder.encode(auth.signature))) return true;
  }
  return false;
}

/**
 * The request as the client may have signed it. Cloudflare's edge and `wrangler dev` rewrite
 * `Accept-Encoding` before a Worker sees it, and some clients sign it (rclone sends and signs
 * `gzip`): a signed Accept-Encoding is also tried with the values clients send (D22.2).
 */
function acceptEncodings(request: SignedRequest, auth: Authorization): SignedRequest[] {
  if (!auth.signedHeaders.includes("accept-encoding")) return [request];
  const received = request.header("accept-encoding");
  const values = [...new Set([received, "gzip", "identity", "gzip, deflate", "gzip, deflate, br"])];
  return values.map((value) => ({
    ...request,
    header: (name: string) => (name === "accept-encoding" ? value : request.header(name)),
  }));
}
