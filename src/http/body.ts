// Reading a body that must be held whole (an XML request, Markdown to sanitise) without letting it
// grow past a limit: the declared length is checked first, then the bytes as they arrive.

/** The bytes of `body`, or null once they pass `limit` (the rest is not read). */
export async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  declared?: string | null,
): Promise<Uint8Array | null> {
  if (declared && Number(declared) > limit) {
    await body?.cancel();
    return null;
  }
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    total += next.value.byteLength;
    if (total > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
