// Local: files on the server's own disk. Its template is served for clients; a Worker has no disk.
import { driverConfig, items } from "./items.ts";
import { CheckFailed, type Driver } from "./types.ts";

export const local: Driver = {
  config: driverConfig({ name: "Local", local_sort: true, only_local: true, no_cache: true, default_root: "/" }),
  additional: items([
    { name: "root_folder_path", type: "string", default: "/", required: true },
    { name: "thumbnail", type: "bool", required: true, help: "enable thumbnail" },
    { name: "use_ffmpeg", type: "bool", required: true, help: "use ffmpeg to generate thumbnail" },
    { name: "thumb_cache_folder", type: "string" },
    {
      name: "thumb_concurrency",
      type: "string",
      default: "16",
      help: "Number of concurrent thumbnail generation goroutines. This controls how many thumbnails can be generated in parallel.",
    },
    {
      name: "thumb_pixel",
      type: "string",
      default: "320",
      help: "Specifies the target width for image thumbnails in pixels. The height of the thumbnail will be calculated automatically to maintain the original aspect ratio of the image.",
    },
    {
      name: "video_thumb_pos",
      type: "string",
      default: "20%",
      help: "The position of the video thumbnail. If the value is a number (integer ot floating point), it represents the time in seconds. If the value ends with '%', it represents the percentage of the video duration.",
    },
    { name: "show_hidden", type: "bool", default: "true", help: "show hidden directories and files" },
    { name: "mkdir_perm", type: "string", default: "777" },
    {
      name: "recycle_bin_path",
      type: "string",
      default: "delete permanently",
      help: "path to recycle bin, delete permanently if empty or keep 'delete permanently'",
    },
  ]),
  async check() {
    throw new CheckFailed(
      "Local storage cannot run on Cloudflare Workers: a Worker has no disk of its own; serve these files from another driver (S3, WebDav, FTP, SFTP, SMB)",
    );
  },
};
