// aws-chunked decoding against Amazon's worked example ("Signature calculation: transfer payload in
// multiple chunks": 65 KiB of `a` in a 64 KiB and a 1 KiB chunk), whose signatures AWS computed.
import { describe, expect, it } from "vitest";
import { chunkSignature, verifiedChunks } from "./chunked.ts";
import { S3Error } from "./rules.ts";
import { parseAuthorization, scopeOf, signatureOf, signingKey } from "./sigv4.ts";

const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const AMZ_DATE = "20130524T000000Z";
const SEED = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
const SIGNATURES = [
  "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
  "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
  "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
];
const auth = parseAuthorization(
  `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature=${SEED}`,
)!;
const signing = async () => ({
  key: await signingKey(SECRET, auth),
  amzDate: AMZ_DATE,
  scope: scopeOf(auth),
  seed: SEED,
});

const text = new TextEncoder();
const frame = (bytes: Uint8Array, signature: string) => {
  const head = text.encode(`${bytes.length.toString(16)};chunk-signature=${signature}\r\n`);
  const out = new Uint8Array(head.length + bytes.length + 2);
  out.set(head);
  out.set(bytes, head.length);
  out.set([13, 10], head.length + bytes.length);
  return out;
};
const parts = [new Uint8Array(65536).fill(97), new Uint8Array(1024).fill(97), new Uint8Array(0)];

/** The body through the verifier, fed in pieces of `step` bytes: the bytes out, or the error. */
async function decode(body: Uint8Array, step: number, length = 66560) {
  const verifier = verifiedChunks(await signing(), length);
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < body.length; at += step) controller.enqueue(body.slice(at, at + step));
      controller.close();
    },
  });
  try {
    const out = new Uint8Array(await new Response(source.pipeThrough(verifier.stream)).arrayBuffer());
    return { out, failure: verifier.failure() };
  } catch {
    return { out: null, failure: verifier.failure() };
  }
}

describe("aws-chunked (AWS's example)", () => {
  it("the seed is the request's signature, and each chunk's is AWS's", async () => {
    const headers: Record<string, string> = {
      "content-encoding": "aws-chunked",
      "content-length": "66824",
      host: "s3.amazonaws.com",
      "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
      "x-amz-date": AMZ_DATE,
      "x-amz-decoded-content-length": "66560",
      "x-amz-storage-class": "REDUCED_REDUNDANCY",
    };
    const request = {
      method: "PUT",
      rawPath: "/examplebucket/chunkObject.txt",
      rawQuery: "",
      header: (name: string) => headers[name],
      payloadHash: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
    };
    expect(await signatureOf(request, auth, AMZ_DATE, SECRET)).toBe(SEED);
    let previous = SEED;
    for (const [i, part] of parts.entries()) {
      expect(await chunkSignature(await signing(), previous, part)).toBe(SIGNATURES[i]);
      previous = SIGNATURES[i]!;
    }
  });

  it("decodes the body whatever the pieces it arrives in", async () => {
    const body = new Uint8Array(parts.reduce((n, part, i) => n + frame(part, SIGNATURES[i]!).length, 0));
    let at = 0;
    for (const [i, part] of parts.entries()) {
      const framed = frame(part, SIGNATURES[i]!);
      body.set(framed, at);
      at += framed.length;
    }
    expect(body.length).toBe(66824);
    for (const step of [1000, 7, 66824]) {
      const { out, failure } = await decode(body, step);
      expect(failure).toBeNull();
      expect(out?.length).toBe(66560);
      expect(out?.every((byte) => byte === 97)).toBe(true);
    }
  });

  it("a changed byte, a wrong signature, a missing final chunk or a wrong length fails", async () => {
    const framed = parts.map((part, i) => frame(part, SIGNATURES[i]!));
    const join = (list: Uint8Array[]) => new Uint8Array(list.flatMap((part) => [...part]));
    const changed = join(framed);
    changed[200] = 98;
    expect((await decode(changed, 4096)).failure?.code).toBe("SignatureDoesNotMatch");
    const swapped = join([framed[0]!, frame(parts[1]!, SIGNATURES[0]!), framed[2]!]);
    expect((await decode(swapped, 4096)).failure?.code).toBe("SignatureDoesNotMatch");
    expect((await decode(join(framed.slice(0, 2)), 4096)).failure?.code).toBe("IncompleteBody");
    expect((await decode(join(framed), 4096, 66561)).failure).toBeInstanceOf(S3Error);
    expect((await decode(text.encode("zz;chunk-signature=00\r\n"), 4096)).failure?.code).toBe("InvalidRequest");
  });
});
