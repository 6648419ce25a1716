// Every text the torrent routes answer. OpenList answers these in Chinese; Gatehouse says the same
// things in English, naming what is wrong.

export const TORRENT_TOO_LARGE = "torrent_data: too large (at most 10 MiB once decoded)";
export const TORRENT_NOT_BASE64 = "torrent_data: not valid Base64";
/** The bytes are no torrent: `reason` says where bencode or the metainfo's shape went wrong. */
export const torrentInvalid = (reason: string) => `failed to parse torrent: ${reason}`;

/** rapid_upload: OpenList's only target is one drive's upload-by-hash API (docs/decisions.md D18.5). */
export const RAPID_UPLOAD_UNAVAILABLE =
  "rapid upload from a torrent is not available: it needs the 189 Cloud PC storage driver's upload-by-hash (CAS), which Gatehouse does not have";
