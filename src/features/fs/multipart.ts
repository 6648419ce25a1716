// The `file` part of a multipart/form-data upload, read as a stream (AList's /api/fs/form): the
// body is never held. The part's size is what the request declares minus the bytes around the
// part, so the file must be the last part and the body end with the closing boundary and a line
// break (`\r\n--boundary--\r\n`), as browsers send it; a body that ends otherwise fails before
// its last byte reaches the storage, and the upload removes what a storage kept (putFile).
import { ApiError } from "../../http/errors.ts";
import { concatBytes } from "../../lib/streams.ts";
import {
  FORM_ENDED_EARLY,
  FORM_FILE_NOT_LAST,
  FORM_LENGTH_MISSING,
  FORM_NO_FILE,
  FORM_NOT_MULTIPART,
  FORM_SHORTER,
} from "./messages.ts";

export interface FilePart {
  filename: string;
  contentType: string;
  size: number;
  body: ReadableStream<Uint8Array>;
}

const MAX_HEAD_BYTES = 64 * 1024;

export async function fileFromMultipart(request: Request): Promise<FilePart> {
  const type = request.headers.get("Content-Type") ?? "";
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  if (!/^multipart\/form-data/i.test(type) || !boundary) throw new ApiError(400, FORM_NOT_MULTIPART);
  const total = Number(request.headers.get("Content-Length") ?? Number.NaN);
  if (!Number.isSafeInteger(total)) throw new ApiError(400, FORM_LENGTH_MISSING);
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  const closing = new TextEncoder().encode(`\r\n${delimiter}--\r\n`);
  const reader = request.body!.getReader();

  // Read until the headers of the `file` part have ended.
  let head = new Uint8Array(0);
  let text = "";
  let partStart = -1;
  for (;;) {
    const match = new RegExp(
      `${escapeRegExp(delimiter)}\\r\\n((?:(?!\\r\\n\\r\\n)[\\s\\S])*?name="file"[\\s\\S]*?)\\r\\n\\r\\n`,
    ).exec(text);
    if (match) {
      partStart = byteLength(text.slice(0, match.index + match[0].length));
      text = match[1]!;
      break;
    }
    if (head.length > MAX_HEAD_BYTES) throw new ApiError(500, FORM_NO_FILE);
    const { done, value } = await reader.read();
    if (done) throw new ApiError(500, FORM_NO_FILE);
    head = concatBytes(head, value);
    text = new TextDecoder("latin1").decode(head);
  }
  const headers = text;
  const filename = decodeLatin1Utf8(/filename="([^"]*)"/i.exec(headers)?.[1] ?? "");
  const contentType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? "application/octet-stream";
  const size = total - partStart - closing.length;
  if (size < 0) throw new ApiError(400, FORM_SHORTER);

  // The part's bytes: what is left of `head`, then the rest of the body, minus the closing boundary.
  let pending: Uint8Array = head.subarray(partStart);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Keep the closing boundary's length in hand, and the whole rest once the part ends, so
      // a wrong ending fails the stream before its last byte reaches the storage.
      while (pending.length < Math.min(closing.length + 1, size - sent + closing.length)) {
        const { done, value } = await reader.read();
        if (done) break;
        pending = concatBytes(pending, value);
      }
      const left = size - sent;
      const take = Math.min(left, pending.length - closing.length);
      if (take <= 0 && left > 0) {
        controller.error(new ApiError(400, FORM_ENDED_EARLY));
        return;
      }
      if (take === left && !sameBytes(pending.subarray(take, take + closing.length), closing)) {
        controller.error(new ApiError(400, FORM_FILE_NOT_LAST));
        return;
      }
      if (take > 0) controller.enqueue(pending.slice(0, take));
      pending = pending.subarray(take);
      sent += take;
      if (sent === size) controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { filename, contentType, size, body };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const byteLength = (latin1: string) => latin1.length;
const decodeLatin1Utf8 = (latin1: string) => new TextDecoder().decode(Uint8Array.from(latin1, (c) => c.charCodeAt(0)));
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);
