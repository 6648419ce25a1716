// SigV4 against the worked examples of Amazon's S3 API reference ("Signature calculations for the
// Authorization header: transferring payload in a single chunk"), computed by AWS, not by us.
import { describe, expect, it } from "vitest";
import { canonicalQuery, canonicalUri, signatureOf } from "../../lib/sigv4.ts";
import { parseAuthorization, signatureMatches } from "./sigv4.ts";

const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const request = (method: string, rawPath: string, rawQuery: string, headers: Record<string, string>) => ({
  method,
  rawPath,
  rawQuery,
  header: (name: string) => headers[name],
  payloadHash: headers["x-amz-content-sha256"]!,
});

describe("SigV4 (AWS's examples)", () => {
  it("GET Object with a Range", async () => {
    const auth = parseAuthorization(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    )!;
    expect(auth).toMatchObject({ accessKeyId: "AKIAIOSFODNN7EXAMPLE", date: "20130524", region: "us-east-1" });
    const signed = request("GET", "/test.txt", "", {
      host: "examplebucket.s3.amazonaws.com",
      range: "bytes=0-9",
      "x-amz-content-sha256": EMPTY_SHA,
      "x-amz-date": "20130524T000000Z",
    });
    expect(await signatureOf(signed, auth, "20130524T000000Z", SECRET)).toBe(auth.signature);
    expect(await signatureMatches(signed, auth, "20130524T000000Z", SECRET)).toBe(true);
    expect(await signatureMatches(signed, auth, "20130524T000000Z", `${SECRET}x`)).toBe(false);
  });

  it("GET Bucket (list objects) with a query", async () => {
    const auth = parseAuthorization(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
    )!;
    const signed = request("GET", "/", "?max-keys=2&prefix=J", {
      host: "examplebucket.s3.amazonaws.com",
      "x-amz-content-sha256": EMPTY_SHA,
      "x-amz-date": "20130524T000000Z",
    });
    expect(await signatureOf(signed, auth, "20130524T000000Z", SECRET)).toBe(auth.signature);
  });

  it("encodes the path once per segment and sorts the query", () => {
    expect(canonicalUri("/s3/b/a%20b%2Bc/%C3%A9~x")).toBe("/s3/b/a%20b%2Bc/%C3%A9~x");
    expect(canonicalUri("/s3/b/a b")).toBe("/s3/b/a%20b");
    expect(canonicalQuery("?prefix=a%2Fb&list-type=2&delimiter=%2F&acl")).toBe(
      "acl=&delimiter=%2F&list-type=2&prefix=a%2Fb",
    );
  });

  it("a signed Accept-Encoding the edge rewrote still matches (rclone signs `gzip`)", async () => {
    const auth = parseAuthorization(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=accept-encoding;host;x-amz-content-sha256;x-amz-date,Signature=" +
        "0".repeat(64),
    )!;
    const headers = {
      "accept-encoding": "gzip",
      host: "gatehouse.test",
      "x-amz-content-sha256": EMPTY_SHA,
      "x-amz-date": "20130524T000000Z",
    };
    const signature = await signatureOf(request("GET", "/s3/b/k", "", headers), auth, "20130524T000000Z", SECRET);
    const signed = { ...auth, signature };
    const rewritten = request("GET", "/s3/b/k", "", { ...headers, "accept-encoding": "br, gzip" });
    expect(await signatureMatches(rewritten, signed, "20130524T000000Z", SECRET)).toBe(true);
    // Only Accept-Encoding is tried again: any other header changed still fails.
    const moved = request("GET", "/s3/b/other", "", { ...headers, "accept-encoding": "br, gzip" });
    expect(await signatureMatches(moved, signed, "20130524T000000Z", SECRET)).toBe(false);
  });

  it("refuses headers of another shape", () => {
    expect(parseAuthorization("AWS AKID:signature")).toBeNull();
    expect(parseAuthorization("AWS4-HMAC-SHA256 Credential=a/b/c,SignedHeaders=host,Signature=00")).toBeNull();
  });
});
