// aws-chunked decoding against Amazon's worked example ("Signature calculation: transfer payload in
// multiple chunks": 65 KiB of `a` in a 64 KiB and a 1 KiB chunk), whose signatures AWS computed.
import { describe, expect, it } from "vitest";
import { checksumOf } from "./checksums.ts";
import {
  type ChunkedPayload,
  canonicalTrailers,
  chunkSignature,
  decodedChunks,
  trailerSignature,
  verifiedChunks,
} from "./chunked.ts";
import { S3Error } from "./rules.ts";
import { scopeOf, signatureOf, signingKey } from "../../lib/sigv4.ts";
import { parseAuthorization } from "./sigv4.ts";

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

// Amazon's trailer example ("Signature calculations for trailing headers"): the same 65 KiB of `a`,
// signed as STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER with `x-amz-trailer: x-amz-checksum-crc32c`.
const TRAILER_SEED = "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e";
const TRAILER_SIGNATURES = [
  "b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2",
  "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7",
  "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992",
];
const TRAILER_SIGNATURE = "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435";

const concat = (list: Uint8Array[]) => {
  const out = new Uint8Array(list.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of list) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

/** A body through a decoder of `payload`, fed in pieces of `step` bytes. */
async function decodeWith(payload: ChunkedPayload, body: Uint8Array, step: number, length: number) {
  const decoder = decodedChunks(payload, length);
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < body.length; at += step) controller.enqueue(body.slice(at, at + step));
      controller.close();
    },
  });
  try {
    const out = new Uint8Array(await new Response(source.pipeThrough(decoder.stream)).arrayBuffer());
    return { out, failure: decoder.failure(), checksum: decoder.checksum(), finished: decoder.finished() };
  } catch {
    return { out: null, failure: decoder.failure(), checksum: null, finished: decoder.finished() };
  }
}

describe("aws-chunked with a signed trailer (AWS's example)", () => {
  const trailerSigning = async () => ({ ...(await signing()), seed: TRAILER_SEED });
  const payload = async (): Promise<ChunkedPayload> => ({
    signing: await trailerSigning(),
    trailing: true,
    trailer: "crc32c",
  });
  const chunksPart = (signatures: string[]) =>
    concat([frame(parts[0]!, signatures[0]!), frame(parts[1]!, signatures[1]!)]);
  const body = (trailer: string, signature: string, afterZero = "") =>
    concat([
      chunksPart(TRAILER_SIGNATURES),
      text.encode(`0;chunk-signature=${TRAILER_SIGNATURES[2]}\r\n${afterZero}`),
      text.encode(`${trailer}\r\nx-amz-trailer-signature:${signature}\r\n\r\n`),
    ]);

  it("each chunk's signature, the trailer's and the CRC32C are AWS's", async () => {
    let previous = TRAILER_SEED;
    for (const [i, part] of parts.entries()) {
      expect(await chunkSignature(await trailerSigning(), previous, part)).toBe(TRAILER_SIGNATURES[i]);
      previous = TRAILER_SIGNATURES[i]!;
    }
    const trailers = new Map([["x-amz-checksum-crc32c", "sOO8/Q=="]]);
    expect(canonicalTrailers(trailers)).toBe("x-amz-checksum-crc32c:sOO8/Q==\n");
    expect(await trailerSignature(await trailerSigning(), previous, trailers)).toBe(TRAILER_SIGNATURE);
    expect(await checksumOf("crc32c", new Uint8Array(66560).fill(97))).toBe("sOO8/Q==");
  });

  it("decodes the body and holds the trailer, whatever the pieces, with or without a blank line after the empty chunk", async () => {
    for (const afterZero of ["", "\r\n"]) {
      const whole = body("x-amz-checksum-crc32c:sOO8/Q==", TRAILER_SIGNATURE, afterZero);
      for (const step of [1000, 7, whole.length]) {
        const result = await decodeWith(await payload(), whole, step, 66560);
        expect(result.failure).toBeNull();
        expect(result.finished).toBe(true);
        expect(result.out?.length).toBe(66560);
        expect(result.checksum).toEqual({ name: "x-amz-checksum-crc32c", value: "sOO8/Q==" });
      }
    }
    // The last line without its CRLF, and no blank line after it (as some clients end).
    const cut = concat([
      chunksPart(TRAILER_SIGNATURES),
      text.encode(`0;chunk-signature=${TRAILER_SIGNATURES[2]}\r\n\r\n`),
      text.encode(`x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:${TRAILER_SIGNATURE}`),
    ]);
    expect((await decodeWith(await payload(), cut, 4096, 66560)).failure).toBeNull();
  });

  it("a wrong trailer signature, a changed checksum, a missing trailer fail", async () => {
    const wrongSignature = body("x-amz-checksum-crc32c:sOO8/Q==", "0".repeat(64));
    expect((await decodeWith(await payload(), wrongSignature, 4096, 66560)).failure?.code).toBe(
      "SignatureDoesNotMatch",
    );
    // A checksum changed after signing: the trailer's signature no longer holds.
    const changed = body("x-amz-checksum-crc32c:AAAAAA==", TRAILER_SIGNATURE);
    expect((await decodeWith(await payload(), changed, 4096, 66560)).failure?.code).toBe("SignatureDoesNotMatch");
    const none = concat([
      chunksPart(TRAILER_SIGNATURES),
      text.encode(`0;chunk-signature=${TRAILER_SIGNATURES[2]}\r\n\r\n`),
    ]);
    expect((await decodeWith(await payload(), none, 4096, 66560)).failure?.code).toBe("SignatureDoesNotMatch");
  });
});

describe("aws-chunked, unsigned with a trailer (the SDKs' default for streams)", () => {
  const data = text.encode("Hello, trailers! ".repeat(500));
  const unsignedBody = (trailer: string, size = 4096) => {
    const out: Uint8Array[] = [];
    for (let at = 0; at < data.length; at += size) {
      const part = data.subarray(at, at + size);
      out.push(text.encode(`${part.length.toString(16)}\r\n`), part, text.encode("\r\n"));
    }
    out.push(text.encode(`0\r\n${trailer}\r\n\r\n`));
    return concat(out);
  };

  it("decodes the bytes and checks each algorithm's checksum", async () => {
    for (const algorithm of ["crc32", "crc32c", "crc64nvme", "sha1", "sha256"] as const) {
      const value = await checksumOf(algorithm, data);
      const whole = unsignedBody(`x-amz-checksum-${algorithm}:${value}`);
      const payload: ChunkedPayload = { signing: null, trailing: true, trailer: algorithm };
      for (const step of [13, 5000]) {
        const result = await decodeWith(payload, whole, step, data.length);
        expect(result.failure).toBeNull();
        expect(new TextDecoder().decode(result.out!)).toBe(new TextDecoder().decode(data));
        expect(result.checksum?.value).toBe(value);
      }
      const wrong = await decodeWith(
        payload,
        unsignedBody(`x-amz-checksum-${algorithm}:${await checksumOf(algorithm, text.encode("x"))}`),
        5000,
        data.length,
      );
      expect(wrong.failure?.code).toBe("BadDigest");
    }
  });

  it("a bad checksum value, a missing trailer, a frame out of shape or a short body fail", async () => {
    const payload: ChunkedPayload = { signing: null, trailing: true, trailer: "crc32" };
    expect(
      (await decodeWith(payload, unsignedBody("x-amz-checksum-crc32:nope"), 5000, data.length)).failure?.code,
    ).toBe("InvalidRequest");
    expect((await decodeWith(payload, unsignedBody("x-amz-meta-a:1"), 5000, data.length)).failure?.code).toBe(
      "MalformedTrailerError",
    );
    expect((await decodeWith(payload, text.encode("zz\r\nabc\r\n"), 5000, 3)).failure?.code).toBe("InvalidRequest");
    const value = await checksumOf("crc32", data);
    expect(
      (await decodeWith(payload, unsignedBody(`x-amz-checksum-crc32:${value}`), 5000, data.length + 1)).failure?.code,
    ).toBe("IncompleteBody");
  });
});

describe("checksums", () => {
  it("match the algorithms' check values over 123456789", async () => {
    const check = text.encode("123456789");
    const hexOf = (base64: string) =>
      [...atob(base64)].map((ch) => ch.charCodeAt(0).toString(16).padStart(2, "0")).join("");
    expect(hexOf(await checksumOf("crc32", check))).toBe("cbf43926");
    expect(hexOf(await checksumOf("crc32c", check))).toBe("e3069283");
    expect(hexOf(await checksumOf("crc64nvme", check))).toBe("ae8b14860a799888");
    expect(hexOf(await checksumOf("sha1", check))).toBe("f7c3bc1d808e04732adf679965ccc34ca7ae3441");
    expect(await checksumOf("crc32", new Uint8Array(0))).toBe("AAAAAA==");
  });
});
