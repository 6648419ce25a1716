// Crypt: encrypts file names and contents stored in another storage; `remote_path` must point
// into a mounted, enabled, working storage.
import { requireText } from "./addition.ts";
import { driverConfig, items } from "./items.ts";
import { requireWorkingStorage } from "./mounts.ts";
import type { Driver } from "./types.ts";

export const crypt: Driver = {
  config: driverConfig({ name: "Crypt", local_sort: true, only_proxy: true, no_cache: true, default_root: "/" }),
  additional: items([
    { name: "filename_encryption", type: "select", default: "off", options: "off,standard,obfuscate", required: true },
    { name: "directory_name_encryption", type: "select", default: "false", options: "false,true", required: true },
    { name: "remote_path", type: "string", required: true, help: "This is where the encrypted data stores" },
    { name: "password", type: "string", required: true, help: "the main password" },
    {
      name: "salt",
      type: "string",
      help: "If you don't know what is salt, treat it as a second password. Optional but recommended",
    },
    {
      name: "encrypted_suffix",
      type: "string",
      default: ".bin",
      required: true,
      help: "for advanced user only! encrypted files will have this suffix",
    },
    {
      name: "filename_encoding",
      type: "select",
      default: "base64",
      options: "base64,base32,base32768",
      required: true,
      help: "for advanced user only!",
    },
    {
      name: "thumbnail",
      type: "bool",
      default: "false",
      required: true,
      help: "enable thumbnail which pre-generated under .thumbnails folder",
    },
    { name: "show_hidden", type: "bool", default: "true", help: "show hidden directories and files" },
  ]),
  pointsInto: (addition) => (addition.text("remote_path") === "" ? [] : [addition.text("remote_path")]),
  async check(addition, context) {
    requireText(addition, "password");
    requireWorkingStorage(requireText(addition, "remote_path"), context.storages, "remote_path");
  },
};
