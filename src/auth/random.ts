const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Uniformly random [A-Za-z0-9] characters from the platform CSPRNG (rejection sampling, no bias). */
export function randomAlphanumeric(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

/** A permanent API token in AList's format: `alist-` + UUIDv4 + 64 alphanumerics. */
export function newPermanentToken(): string {
  return `alist-${crypto.randomUUID()}${randomAlphanumeric(64)}`;
}
