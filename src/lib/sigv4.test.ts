// The client side of SigV4 (signRequest): AWS's published presigned-URL example, and the headers
// and URLs aws4fetch (the library it replaced, a devDependency for the tests) writes for the same
// requests at the same instant. The verifying side's examples are in src/features/s3/sigv4.test.ts.
import { AwsV4Signer } from "aws4fetch";
import { describe, expect, it } from "vitest";
import { type SignOptions, type SigningKeys, signRequest } from "./sigv4.ts";

const EXAMPLE: SigningKeys = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  region: "us-east-1",
  service: "s3",
};
const AT = new Date("2013-05-24T00:00:00Z");

describe("signRequest against AWS's examples", () => {
  it("presigns GET test.txt for a day as the S3 API reference does", async () => {
    const { url } = await signRequest("https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Expires=86400", EXAMPLE, {
      presign: true,
      now: AT,
    });
    const query = new URL(url).searchParams;
    expect(query.get("X-Amz-Credential")).toBe("AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request");
    expect(query.get("X-Amz-Date")).toBe("20130524T000000Z");
    expect(query.get("X-Amz-SignedHeaders")).toBe("host");
    expect(query.get("X-Amz-Signature")).toBe("aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  });
});

/** What aws4fetch signs for the same request, as `signRequest` returns it. */
async function reference(url: string, keys: SigningKeys, options: SignOptions) {
  const signer = new AwsV4Signer({
    url,
    method: options.method ?? "GET",
    headers: options.headers ?? {},
    ...keys,
    datetime: options.now!.toISOString().replace(/[:-]|\.\d{3}/g, ""),
    signQuery: options.presign ?? false,
    allHeaders: options.allHeaders ?? false,
  });
  const signed = await signer.sign();
  return { url: signed.url.toString(), headers: Object.fromEntries(signed.headers) };
}

describe("signRequest against aws4fetch", () => {
  const keys: SigningKeys = { ...EXAMPLE, region: "eu-west-3", sessionToken: "session+token/=" };
  const cases: [string, string, SignOptions][] = [
    ["a listing", "http://127.0.0.1:9000/my%20bucket/?prefix=a%20b%2Fc&max-keys=1000&list-type=2", {}],
    ["a HEAD of an escaped key", "https://b.s3.example.com/dir/a%20b%2B%25%C3%A9%27%28%29%2A.txt", { method: "HEAD" }],
    [
      "a copy with its source and a storage class",
      "https://b.s3.example.com/to/x.txt",
      {
        method: "PUT",
        headers: { "x-amz-copy-source": "/b/from/x.txt", "X-Amz-Storage-Class": "STANDARD_IA", "Content-Length": "0" },
      },
    ],
    ["a batch delete", "https://b.s3.example.com/?delete", { method: "POST", headers: { "Content-Type": "text/xml" } }],
    [
      "a presigned download with its disposition",
      "https://b.s3.example.com/f.txt?X-Amz-Expires=14400&response-content-disposition=attachment%3B%20filename*%3DUTF-8%27%27a%2520b",
      { presign: true },
    ],
    ["a presigned GET without an expiry", "https://b.s3.example.com/f.txt", { presign: true }],
    [
      "a presigned PUT of one size",
      "https://b.s3.example.com/up/f.bin?X-Amz-Expires=900",
      { method: "PUT", headers: { "Content-Length": "12345" }, presign: true, allHeaders: true },
    ],
  ];

  it.each(cases)("signs %s alike", async (_what, url, options) => {
    const now = new Date("2026-12-07T03:04:05.678Z");
    for (const signing of [keys, EXAMPLE]) {
      const ours = await signRequest(url, signing, { ...options, now });
      const theirs = await reference(url, signing, { ...options, now });
      expect(ours.url).toBe(theirs.url);
      expect(Object.fromEntries(ours.headers)).toEqual(theirs.headers);
    }
  });
});
