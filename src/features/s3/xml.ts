// The XML documents the S3 endpoint answers, written as strings (S3's replies are small, flat and
// fixed in shape): errors, ListBuckets, and ListObjects v1 and v2 (Amazon S3 API reference).
import type { S3Code } from "./messages.ts";

export const S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/";
const PROLOG = '<?xml version="1.0" encoding="UTF-8"?>\n';

const escapeXml = (text: string) =>
  text.replace(/[<>&"']/g, (ch) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[ch]!);

const element = (name: string, value: string | number | boolean) => `<${name}>${escapeXml(String(value))}</${name}>`;

/** S3's ISO 8601 time with milliseconds, as its listings write it. */
const isoTime = (date: Date) => (Number.isNaN(date.getTime()) ? new Date(0) : date).toISOString();

export function errorDocument(code: S3Code, message: string, resource: string, requestId: string): string {
  return `${PROLOG}<Error>${element("Code", code)}${element("Message", message)}${element("Resource", resource)}${element("RequestId", requestId)}</Error>`;
}

export function listBucketsDocument(buckets: { name: string; created: Date }[], owner: { id: string; name: string }) {
  const rows = buckets
    .map(
      (bucket) => `<Bucket>${element("Name", bucket.name)}${element("CreationDate", isoTime(bucket.created))}</Bucket>`,
    )
    .join("");
  return `${PROLOG}<ListAllMyBucketsResult xmlns="${S3_NS}"><Owner>${element("ID", owner.id)}${element("DisplayName", owner.name)}</Owner><Buckets>${rows}</Buckets></ListAllMyBucketsResult>`;
}

interface ListedObject {
  key: string;
  modified: Date;
  etag: string;
  size: number;
}

export interface ListingDocument {
  version: 1 | 2;
  bucket: string;
  prefix: string;
  delimiter: string;
  maxKeys: number;
  encodeUrl: boolean;
  truncated: boolean;
  objects: ListedObject[];
  prefixes: string[];
  /** v2 */
  continuationToken?: string | undefined;
  nextContinuationToken?: string | undefined;
  startAfter?: string | undefined;
  /** v1 */
  marker?: string | undefined;
  nextMarker?: string | undefined;
}

/** ListObjects (v1) and ListObjectsV2's ListBucketResult; with `encoding-type=url`, keys and prefixes URL-encoded. */
export function listingDocument(list: ListingDocument): string {
  const key = (text: string) => (list.encodeUrl ? encodeURIComponent(text).replace(/%2F/g, "/") : text);
  const parts = [element("Name", list.bucket), element("Prefix", key(list.prefix))];
  if (list.version === 2) {
    if (list.continuationToken !== undefined) parts.push(element("ContinuationToken", list.continuationToken));
    if (list.startAfter !== undefined) parts.push(element("StartAfter", key(list.startAfter)));
    parts.push(element("KeyCount", list.objects.length + list.prefixes.length));
  } else parts.push(element("Marker", key(list.marker ?? "")));
  parts.push(element("MaxKeys", list.maxKeys));
  if (list.delimiter !== "") parts.push(element("Delimiter", key(list.delimiter)));
  if (list.encodeUrl) parts.push(element("EncodingType", "url"));
  parts.push(element("IsTruncated", list.truncated));
  if (list.version === 2 && list.nextContinuationToken !== undefined)
    parts.push(element("NextContinuationToken", list.nextContinuationToken));
  if (list.version === 1 && list.nextMarker !== undefined) parts.push(element("NextMarker", key(list.nextMarker)));
  for (const object of list.objects)
    parts.push(
      `<Contents>${element("Key", key(object.key))}${element("LastModified", isoTime(object.modified))}${element("ETag", object.etag)}${element("Size", object.size)}${element("StorageClass", "STANDARD")}</Contents>`,
    );
  for (const prefix of list.prefixes) parts.push(`<CommonPrefixes>${element("Prefix", key(prefix))}</CommonPrefixes>`);
  return `${PROLOG}<ListBucketResult xmlns="${S3_NS}">${parts.join("")}</ListBucketResult>`;
}

/** CopyObject's reply: the copy's time and ETag. */
export const copyObjectDocument = (modified: Date, etag: string) =>
  `${PROLOG}<CopyObjectResult xmlns="${S3_NS}">${element("LastModified", isoTime(modified))}${element("ETag", etag)}</CopyObjectResult>`;

/** DeleteObjects' reply: each key deleted (left out when Quiet) and each refused with its code. */
export function deleteResultDocument(
  deleted: string[],
  errors: { key: string; code: S3Code; message: string }[],
): string {
  const rows = [
    ...deleted.map((key) => `<Deleted>${element("Key", key)}</Deleted>`),
    ...errors.map(
      (error) =>
        `<Error>${element("Key", error.key)}${element("Code", error.code)}${element("Message", error.message)}</Error>`,
    ),
  ];
  return `${PROLOG}<DeleteResult xmlns="${S3_NS}">${rows.join("")}</DeleteResult>`;
}

// ---- Multipart uploads (multipart.ts)

const owner = (tag: string, who: { id: string; name: string }) =>
  `<${tag}>${element("ID", who.id)}${element("DisplayName", who.name)}</${tag}>`;

export const initiateDocument = (bucket: string, key: string, uploadId: string) =>
  `${PROLOG}<InitiateMultipartUploadResult xmlns="${S3_NS}">${element("Bucket", bucket)}${element("Key", key)}${element("UploadId", uploadId)}</InitiateMultipartUploadResult>`;

export const completeDocument = (location: string, bucket: string, key: string, etag: string) =>
  `${PROLOG}<CompleteMultipartUploadResult xmlns="${S3_NS}">${element("Location", location)}${element("Bucket", bucket)}${element("Key", key)}${element("ETag", etag)}</CompleteMultipartUploadResult>`;

export interface ListedPart {
  number: number;
  modified: Date;
  etag: string;
  size: number;
}

/** ListParts' reply: one page of an upload's parts, by number. */
export function listPartsDocument(list: {
  bucket: string;
  key: string;
  uploadId: string;
  marker: number;
  maxParts: number;
  truncated: boolean;
  parts: ListedPart[];
  who: { id: string; name: string };
}): string {
  const parts = [
    element("Bucket", list.bucket),
    element("Key", list.key),
    element("UploadId", list.uploadId),
    owner("Initiator", list.who),
    owner("Owner", list.who),
    element("StorageClass", "STANDARD"),
    element("PartNumberMarker", list.marker),
  ];
  const last = list.parts.at(-1);
  if (list.truncated && last) parts.push(element("NextPartNumberMarker", last.number));
  parts.push(element("MaxParts", list.maxParts), element("IsTruncated", list.truncated));
  for (const part of list.parts)
    parts.push(
      `<Part>${element("PartNumber", part.number)}${element("LastModified", isoTime(part.modified))}${element("ETag", part.etag)}${element("Size", part.size)}</Part>`,
    );
  return `${PROLOG}<ListPartsResult xmlns="${S3_NS}">${parts.join("")}</ListPartsResult>`;
}

export interface ListedUpload {
  key: string;
  uploadId: string;
  initiated: Date;
}

/** ListMultipartUploads' reply: one page of a bucket's uploads in progress, by key then id. */
export function listUploadsDocument(list: {
  bucket: string;
  prefix: string;
  delimiter: string;
  keyMarker: string;
  uploadIdMarker: string;
  maxUploads: number;
  truncated: boolean;
  uploads: ListedUpload[];
  prefixes: string[];
  who: { id: string; name: string };
}): string {
  const parts = [
    element("Bucket", list.bucket),
    element("KeyMarker", list.keyMarker),
    element("UploadIdMarker", list.uploadIdMarker),
  ];
  const last = list.uploads.at(-1);
  if (list.truncated && last)
    parts.push(element("NextKeyMarker", last.key), element("NextUploadIdMarker", last.uploadId));
  parts.push(element("Prefix", list.prefix));
  if (list.delimiter !== "") parts.push(element("Delimiter", list.delimiter));
  parts.push(element("MaxUploads", list.maxUploads), element("IsTruncated", list.truncated));
  for (const upload of list.uploads)
    parts.push(
      `<Upload>${element("Key", upload.key)}${element("UploadId", upload.uploadId)}${owner("Initiator", list.who)}${owner("Owner", list.who)}${element("StorageClass", "STANDARD")}${element("Initiated", isoTime(upload.initiated))}</Upload>`,
    );
  for (const prefix of list.prefixes) parts.push(`<CommonPrefixes>${element("Prefix", prefix)}</CommonPrefixes>`);
  return `${PROLOG}<ListMultipartUploadsResult xmlns="${S3_NS}">${parts.join("")}</ListMultipartUploadsResult>`;
}
