// The upstreams the workerd suites read and write directly, not through Gatehouse, to see what a
// request left there: the S3 bucket on s3rver (signed with aws4fetch) and webdav-server.
import { AwsClient } from "aws4fetch";
import { expect, inject } from "vitest";
import { mountStorage } from "./workerd-client.ts";

const servers = () => inject("storageServers");
export const BUCKET = "gatehouse-bucket";

/** A path with each segment percent-encoded, as a client puts it in a URL. */
export const escaped = (path: string) => path.split("/").map(encodeURIComponent).join("/");

/**
 * The addition of an S3 storage on the test bucket (add root_folder_path). The placeholder is not
 * AList's `.alist`: s3rver fails every listing once a key has a segment starting with a dot.
 */
export const s3Addition = () => ({
  endpoint: servers().s3Endpoint,
  bucket: BUCKET,
  access_key_id: "GATEHOUSEKEY",
  secret_access_key: "gatehouse-secret-key",
  placeholder: "keep",
});

/** The addition of a WebDAV storage on the test server, rooted at `root`. */
export const davAddition = (root: string) => ({
  address: servers().webdavUrl,
  username: "davuser",
  password: "dav password",
  root_folder_path: root,
});

/** Mounts the test bucket's `root` folder at /s3 as the admin `admin`. */
export async function mountS3Root(admin: string, root: string): Promise<void> {
  const made = await mountStorage(admin, "/s3", "S3", { ...s3Addition(), root_folder_path: `/${root}` });
  expect(made.code, made.message).toBe(200);
}

const s3 = new AwsClient({
  accessKeyId: "GATEHOUSEKEY",
  secretAccessKey: "gatehouse-secret-key",
  service: "s3",
  region: "us-east-1",
  retries: 0,
});

/** A signed request for an object of the bucket, straight to s3rver. */
export const s3Object = (key: string, init?: RequestInit) =>
  s3.fetch(`${servers().s3Endpoint}/${BUCKET}/${escaped(key)}`, init);

/** An object's text in the bucket, read from s3rver itself; null when absent. */
export async function s3Text(key: string): Promise<string | null> {
  const response = await s3Object(key);
  return response.status === 404 ? null : response.text();
}

/** Puts an object straight into the bucket. */
export async function s3Put(key: string, body: string | Uint8Array): Promise<void> {
  const response = await s3Object(key, { method: "PUT", body });
  expect(response.status, `PUT ${key}`).toBe(200);
}

/** The keys of the bucket under `prefix`, read from s3rver itself. */
export async function s3Keys(prefix: string): Promise<string[]> {
  const response = await s3.fetch(`${servers().s3Endpoint}/${BUCKET}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
  return [...(await response.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!.replace(/&amp;/g, "&"));
}

/** The multipart uploads pending in the bucket under `prefix` (ListMultipartUploads), as `key uploadId`. */
export async function s3PendingUploads(prefix: string): Promise<string[]> {
  const response = await s3.fetch(`${servers().s3Endpoint}/${BUCKET}?uploads`);
  expect(response.status).toBe(200);
  return [...(await response.text()).matchAll(/<Key>([^<]*)<\/Key><UploadId>([^<]*)<\/UploadId>/g)]
    .map((m) => `${m[1]!.replace(/&amp;/g, "&")} ${m[2]}`)
    .filter((upload) => upload.startsWith(prefix));
}

const UPSTREAM_DAV_AUTH = `Basic ${btoa("davuser:dav password")}`;

/** A request straight to the WebDAV upstream (webdav-server), path escaped segment by segment. */
export const upstreamDav = (method: string, path: string, init: RequestInit = {}) =>
  fetch(`${servers().webdavUrl}${escaped(path)}`, {
    ...init,
    method,
    headers: { Authorization: UPSTREAM_DAV_AUTH, ...(init.headers as Record<string, string> | undefined) },
  });

/** A file's text on the WebDAV upstream; null when absent. */
export async function upstreamDavText(path: string): Promise<string | null> {
  const response = await upstreamDav("GET", path);
  return response.status === 404 ? null : response.text();
}

/** Every request the S3 or WebDAV upstream got so far, as `METHOD url [Range]` (storage-servers.ts requestLog). */
export async function upstreamRequests(upstream: "s3" | "dav"): Promise<string[]> {
  const base = upstream === "s3" ? servers().s3Endpoint : servers().webdavUrl;
  return (await fetch(`${base}/__requests`)).json();
}

/** Controls of the S3 upstream's stalled parts (storage-servers.ts partStall): arm, count, release. */
export const s3Stall = {
  arm: async (partNumber: number) =>
    void (await fetch(`${servers().s3Endpoint}/__stall?partNumber=${partNumber}`, { method: "POST" })).body?.cancel(),
  held: async (): Promise<number> => (await fetch(`${servers().s3Endpoint}/__stalled`)).json(),
  /** Lets go of the stalled parts (only the one held longest with `oldest`): failed by S3, or stored with `pass`. */
  release: async (options: { pass?: boolean; oldest?: boolean } = {}) => {
    const query = [options.pass && "pass", options.oldest && "oldest"].filter(Boolean).join("&");
    await (await fetch(`${servers().s3Endpoint}/__release${query && `?${query}`}`, { method: "POST" })).body?.cancel();
  },
};

/**
 * Reads of a file on the WebDAV upstream that break off or fail (storage-servers.ts readFaults):
 * the next `count` GETs of `path` cut after `after` bytes (`count: -1`, every one until cleared;
 * `after: 0`, nothing given: a storage failing for good), or answered with `status`.
 */
export const davReadFaults = {
  arm: async (path: string, fault: { after?: number; count?: number; status?: number }) => {
    const query = new URLSearchParams({ path, after: String(fault.after ?? 0), count: String(fault.count ?? 1) });
    if (fault.status !== undefined) query.set("status", String(fault.status));
    const response = await fetch(`${servers().webdavUrl}/__breakoff?${query}`, { method: "POST" });
    expect(response.status).toBe(200);
    await response.body?.cancel();
  },
  clear: async (path: string) => {
    const response = await fetch(`${servers().webdavUrl}/__breakoff?${new URLSearchParams({ path, count: "0" })}`, {
      method: "POST",
    });
    await response.body?.cancel();
  },
};
