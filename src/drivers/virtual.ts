// Virtual: generated placeholder files for testing clients. Nothing to reach, so it always works.
import { driverConfig, items } from "./items.ts";
import type { Driver } from "./types.ts";

export const virtual: Driver = {
  config: driverConfig({ name: "Virtual", local_sort: true, only_local: true, need_ms: true, default_root: "" }),
  additional: items([
    { name: "root_folder_path", type: "string" },
    { name: "num_file", type: "number", default: "30", required: true },
    { name: "num_folder", type: "number", default: "30", required: true },
    { name: "max_file_size", type: "number", default: "1073741824", required: true },
    { name: "min_file_size", type: "number", default: "1048576", required: true },
  ]),
  async check() {},
};
