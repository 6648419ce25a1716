// The texts the archive routes answer, each defined once. None names a server path or a storage's
// address: an archive is named by the path the caller gave, an entry by its name in the archive
// (docs/decisions.md D13.5).

/** The archive password (inner `pass`) is missing or wrong; AList's wording for the UI's password prompt. */
export const WRONG_PASSWORD = "wrong archive password";
export const PASSWORD_NEEDED = "wrong archive password: this entry is encrypted, give the archive password";
export const AES_REFUSED = "this zip entry is AES-encrypted, which Gatehouse cannot open: only ZipCrypto passwords";
export const methodRefused = (method: number) =>
  `this zip entry uses compression method ${method}: only stored and deflated entries can be opened`;

export const NOT_A_ZIP = "zip: not a valid zip file";
export const ZIP_DAMAGED = "zip: the archive is damaged: its directory points outside the file";
export const CENTRAL_DIRECTORY_TOO_LARGE =
  "zip: the archive's directory is over 4 MiB: too many entries or too long names to open here";
export const tooManyEntries = (limit: number) =>
  `zip: the archive holds more than ${limit} files and folders: too many to list or open here`;
/** An overlap bomb: entries that share their compressed bytes (docs/decisions.md D13.7). */
export const entriesOverlap = (entry: string, next: string | null) =>
  next === null
    ? `the entry ${JSON.stringify(entry)} runs into the archive's directory: its data overlaps, refused as a zip bomb`
    : `the entries ${JSON.stringify(entry)} and ${JSON.stringify(next)} share their data in the archive: refused as a zip bomb`;
export const entryLonger = (size: number) =>
  `the entry holds more than the ${size} bytes the archive's directory declares: cut off there`;
export const entryShorter = (seen: number, size: number) =>
  `the entry ended after ${seen} of the ${size} bytes the archive's directory declares`;
export const ENTRY_CHECKSUM = "the entry's checksum does not match: the archive is damaged";

/** Formats AList opens with tools Gatehouse does not have at the edge. */
export const formatRefused = (name: string) =>
  `${name}: only .zip archives can be opened (rar, 7z, tar and compressed files are not supported)`;
export const unsafeEntry = (entry: string) =>
  `the archive holds an entry whose name leaves its folder (${JSON.stringify(entry)}): the archive is refused`;
export const bombEntry = (entry: string, size: number, ratio: number) =>
  `the entry ${JSON.stringify(entry)} expands to ${size} bytes, over ${ratio} times its compressed size: refused as a zip bomb`;
export const tooLargeToExtract = (limit: number) =>
  `extracting this would write more than ${limit} bytes: over the limit of one request`;
export const tooManyToExtract = (limit: number) =>
  `extracting this would write more than ${limit} files and folders: over the limit of one request`;
/** AList's text for an entry the archive does not hold (internal/errs/object.go:10). */
export const ENTRY_NOT_FOUND = "object not found";
export const decompressTaskName = (archive: string, inner: string, dest: string) =>
  `decompress [${archive}](${inner}) to [${dest}]`;
