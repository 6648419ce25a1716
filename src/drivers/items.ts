// The common items every driver template starts with, generated from its config in AList's order
// and with its conditions (AList v3.58.0 internal/op/driver.go:61-153), and the helpers that
// complete the drivers' tables.
import type { Driver, DriverConfig, DriverItem } from "./types.ts";

type ItemSpec = Pick<DriverItem, "name" | "type"> & Partial<DriverItem>;

/** Fills the keys a table row leaves out: strings "", `required` false. */
export function items(specs: ItemSpec[]): DriverItem[] {
  return specs.map((spec) => ({ default: "", options: "", required: false, help: "", ...spec }));
}

export function driverConfig(spec: Pick<DriverConfig, "name" | "default_root"> & Partial<DriverConfig>): DriverConfig {
  return {
    name: spec.name,
    local_sort: spec.local_sort ?? false,
    only_local: spec.only_local ?? false,
    only_proxy: spec.only_proxy ?? false,
    no_cache: spec.no_cache ?? false,
    no_upload: spec.no_upload ?? false,
    need_ms: spec.need_ms ?? false,
    default_root: spec.default_root,
    alert: spec.alert ?? "",
  };
}

export function commonItems(driver: Pick<Driver, "config" | "proxyRangeOption">): DriverItem[] {
  const { config } = driver;
  const redirects = !config.only_proxy && !config.only_local;
  return items([
    {
      name: "mount_path",
      type: "string",
      required: true,
      help: "The path you want to mount to, it is unique and cannot be repeated",
    },
    { name: "order", type: "number", help: "use to sort" },
    { name: "remark", type: "text" },
    ...(config.no_cache
      ? []
      : [
          {
            name: "cache_expiration",
            type: "number",
            default: "30",
            required: true,
            help: "The cache expiration time for this storage",
          } as const,
        ]),
    ...(redirects
      ? [
          { name: "web_proxy", type: "bool" } as const,
          {
            name: "webdav_policy",
            type: "select",
            options: "302_redirect,use_proxy_url,native_proxy",
            default: "302_redirect",
            required: true,
          } as const,
          // The default is "true" only for 139Yun, which Gatehouse does not carry.
          ...(driver.proxyRangeOption
            ? [{ name: "proxy_range", type: "bool", help: "Need to enable proxy" } as const]
            : []),
        ]
      : [
          {
            name: "webdav_policy",
            type: "select",
            default: "native_proxy",
            options: "use_proxy_url,native_proxy",
            required: true,
          } as const,
        ]),
    { name: "down_proxy_url", type: "text" },
    { name: "down_proxy_sign", type: "bool", default: "true" },
    ...(config.local_sort
      ? [
          { name: "order_by", type: "select", options: "name,size,modified" } as const,
          { name: "order_direction", type: "select", options: "asc,desc" } as const,
        ]
      : []),
    { name: "extract_folder", type: "select", options: "front,back" },
    { name: "disable_index", type: "bool", default: "false", required: true },
    { name: "enable_sign", type: "bool", default: "false", required: true },
  ]);
}
