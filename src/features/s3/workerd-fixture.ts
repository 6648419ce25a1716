// What the S3 endpoint's workerd suites share: requests signed by aws4fetch (an independent SigV4
// implementation, as any S3 client signs) sent to the Worker, tags and S3's error code read from a
// reply, an owner's access keys, and the scene s3 and sigv4 .workerd.test.ts both read: objects on
// s3rver and webdav-server below ROOT, mounted at /team, /other (S3) and /shared (WebDAV), and a
// user who owns the keys. Each file names its own sign-in and user, so neither reads the other's.
import { exports } from "cloudflare:workers";
import { AwsClient } from "aws4fetch";
import { expect } from "vitest";
import { Bits } from "../../../test/support/dav-client.ts";
import { sql } from "../../../test/support/libsql-http.ts";
import { davAddition, s3Addition, s3Put, upstreamDav } from "../../../test/support/upstreams.ts";
import { callApi, makeUser, mountStorage, signIn } from "../../../test/support/workerd-client.ts";

/** Where s3 and sigv4 .workerd.test.ts keep their objects on both upstreams. */
export const ROOT = "s3-endpoint";
export const BASE = "http://gatehouse.test/s3";

export type Key = { id: number; access_key_id: string; secret_access_key: string };
type Signer = Pick<Key, "access_key_id" | "secret_access_key">;

/** Every bit an S3 key can use. */
export const ALL =
  Bits.SEE_HIDES |
  Bits.ACCESS_WITHOUT_PASSWORD |
  Bits.WRITE |
  Bits.RENAME |
  Bits.MOVE |
  Bits.COPY |
  Bits.REMOVE |
  Bits.WEBDAV_READ |
  Bits.WEBDAV_MANAGE;

/** An access key of the user signed in with `token`, for S3 unless `body` says otherwise. */
export async function makeKey(token: string, body: Record<string, unknown>): Promise<Key> {
  const made = await callApi(token, "/api/me/access_key/create", { usage: ["s3"], ...body });
  expect(made.code, made.message).toBe(200);
  return made.data as Key;
}

export const clientOf = (key: Signer) =>
  new AwsClient({
    accessKeyId: key.access_key_id,
    secretAccessKey: key.secret_access_key,
    service: "s3",
    region: "us-east-1",
    retries: 0,
  });

/** A request signed by aws4fetch, sent to the Worker. */
export async function s3(
  key: Signer,
  path: string,
  init: RequestInit & { aws?: { datetime?: string; allHeaders?: boolean } } = {},
): Promise<Response> {
  const signed = await clientOf(key).sign(`${BASE}${path}`, init);
  return exports.default.fetch(signed);
}

/** The text of every `<name>` element, its entities read. */
export const tags = (xml: string, name: string) =>
  [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, "g"))].map((m) =>
    m[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&"),
  );
export const codeOf = async (reply: Response) => tags(await reply.text(), "Code")[0];

/**
 * The endpoint's scene, afresh: the admin signed in as `clientId`, the objects and storages above,
 * and `username` made with every bit on / and signed in; that user's token.
 */
export async function setUpEndpoint(clientId: string, username: string): Promise<string> {
  const admin = await signIn(clientId);
  await sql("DELETE FROM storages");
  await sql("DELETE FROM metas");
  await s3Put(`${ROOT}/team/photos/a.jpg`, "photo a");
  await s3Put(`${ROOT}/team/photos/2024/b.jpg`, "photo b");
  await s3Put(`${ROOT}/team/photos/2024/c.jpg`, "photo c");
  await s3Put(`${ROOT}/team/docs/readme.txt`, "0123456789");
  await s3Put(`${ROOT}/team/secret.txt`, "not for keys");
  await s3Put(`${ROOT}/other/x.txt`, "other");
  for (const folder of [`/${ROOT}`, `/${ROOT}/shared`, `/${ROOT}/shared/box`]) await upstreamDav("MKCOL", folder);
  expect((await upstreamDav("PUT", `/${ROOT}/shared/box/note.txt`, { body: "dav note" })).status).toBeLessThan(300);
  for (const bucket of ["team", "other"]) {
    const mounted = await mountStorage(admin, `/${bucket}`, "S3", {
      ...s3Addition(),
      root_folder_path: `/${ROOT}/${bucket}`,
    });
    expect(mounted.code).toBe(200);
  }
  expect((await mountStorage(admin, "/shared", "WebDav", davAddition(`/${ROOT}/shared`))).code).toBe(200);
  await makeUser(admin, username, { "/": Bits.ALL & ~Bits.PATH_LIMIT });
  return signIn(username, username, `${username} password`);
}
