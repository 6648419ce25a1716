// AList's wire shapes of the file side (AList v3.58.0 server/handles/fsread.go:35-59, :330): the
// object keys in AList's order, times as Go's RFC 3339 with nanoseconds, the type by extension,
// hash info as text and object.
import type { FileObject } from "../../drivers/types.ts";
import type { FsSettings } from "./state.ts";

export const FileType = { UNKNOWN: 0, FOLDER: 1, VIDEO: 2, AUDIO: 3, TEXT: 4, IMAGE: 5 } as const;

/** Go's RFC3339Nano in UTC: fractional seconds without trailing zeros, none when whole. */
export function rfc3339(date: Date): string {
  if (Number.isNaN(date.getTime())) return "0001-01-01T00:00:00Z";
  const iso = date.toISOString(); // 2026-03-01T08:00:00.120Z (or ±YYYYYY for far years)
  // Whole seconds, most times: no expression to run (a listing writes two per entry).
  if (iso.endsWith(".000Z")) return `${iso.slice(0, -5)}Z`;
  // The milliseconds (the three digits before Z, not all zero) without their trailing zeros, by
  // slices: a listing of entries with milliseconds writes two per entry.
  const digits = iso[iso.length - 2] !== "0" ? 3 : iso[iso.length - 3] !== "0" ? 2 : 1;
  return `${iso.slice(0, iso.length - 4 + digits)}Z`;
}

export const extensionOf = (name: string) => {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? "" : name.slice(dot + 1).toLowerCase();
};

/** By extension, in AList's order: audio, video, image, text. */
export function typeByName(name: string, settings: FsSettings): number {
  const ext = extensionOf(name);
  if (ext === "") return FileType.UNKNOWN;
  if (settings.audioTypes.has(ext)) return FileType.AUDIO;
  if (settings.videoTypes.has(ext)) return FileType.VIDEO;
  if (settings.imageTypes.has(ext)) return FileType.IMAGE;
  if (settings.textTypes.has(ext)) return FileType.TEXT;
  return FileType.UNKNOWN;
}

function hashFields(object: FileObject) {
  const hashes = object.hashInfo && Object.keys(object.hashInfo).length > 0 ? object.hashInfo : null;
  return { hashinfo: hashes ? JSON.stringify(hashes) : "null", hash_info: hashes };
}

/** The object fields shared by list items and `get`, in AList's key order. */
export function objectFields(object: FileObject, sign: string, type: number) {
  const modified = rfc3339(object.modified);
  return {
    id: "",
    path: object.path,
    name: object.name,
    size: object.size,
    is_dir: object.isDir,
    modified,
    created: object.created ? rfc3339(object.created) : modified,
    sign,
    thumb: "",
    type,
    ...hashFields(object),
  };
}

/** A `content` item of `/api/fs/list`: folders are type 1; `storage_class` only when known. */
export function listItem(object: FileObject, sign: string, settings: FsSettings) {
  return {
    ...objectFields(object, sign, object.isDir ? FileType.FOLDER : typeByName(object.name, settings)),
    label_list: null,
    ...(object.storageClass ? { storage_class: object.storageClass } : {}),
  };
}

/** The object part of `/api/fs/get`: the type from the name alone, as AList (a folder can be 0). */
export function getObjectFields(object: FileObject, sign: string, settings: FsSettings) {
  return {
    ...objectFields(object, sign, typeByName(object.name, settings)),
    ...(object.storageClass ? { storage_class: object.storageClass } : {}),
  };
}
