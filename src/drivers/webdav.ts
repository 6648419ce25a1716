// WebDav: the check asks for the root folder's properties (PROPFIND, Depth 0) with basic auth.
import { cleanPath } from "../lib/path.ts";
import { requireText } from "./addition.ts";
import { errorText, unreachable } from "./failures.ts";
import { driverConfig, items } from "./items.ts";
import { CheckFailed, type Driver } from "./types.ts";
import { base64, PROPFIND_BODY, webDavFiles } from "./webdav-files.ts";

export const webDav: Driver = {
  config: driverConfig({ name: "WebDav", local_sort: true, only_proxy: true, default_root: "/" }),
  additional: items([
    { name: "vendor", type: "select", default: "other", options: "sharepoint,other" },
    { name: "address", type: "string", required: true },
    { name: "username", type: "string", required: true },
    { name: "password", type: "string", required: true },
    { name: "root_folder_path", type: "string", default: "/", required: true },
  ]),
  files: (storage) => webDavFiles(storage),
  async check(addition, context) {
    const address = requireText(addition, "address");
    const root = cleanPath(addition.text("root_folder_path"));
    let url: URL;
    try {
      url = new URL(address.replace(/\/+$/, "") + root.split("/").map(encodeURIComponent).join("/"));
    } catch (error) {
      throw new CheckFailed(`address "${address}" is not a URL: ${errorText(error)}`);
    }
    const headers: Record<string, string> = { Depth: "0", "Content-Type": "application/xml; charset=utf-8" };
    const username = addition.text("username");
    if (username !== "") headers.Authorization = `Basic ${base64(`${username}:${addition.text("password")}`)}`;
    let response: Response;
    let body: string;
    try {
      response = await fetch(url, { method: "PROPFIND", headers, body: PROPFIND_BODY, signal: context.signal });
      body = await response.text();
    } catch (error) {
      throw unreachable(address, error, context);
    }
    if (response.status === 401) throw new CheckFailed("wrong username or password");
    if (response.status === 404) throw new CheckFailed(`root folder ${root} not found`);
    if (response.status !== 207)
      throw new CheckFailed(`${address} answered PROPFIND with HTTP ${response.status} ${response.statusText}`.trim());
    if (!/<([\w-]+:)?collection\b/i.test(body)) throw new CheckFailed(`root folder ${root} is a file, not a folder`);
  },
};
