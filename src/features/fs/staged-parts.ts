// Uploads in parts on storages whose protocol has none (WebDAV, FTP; docs/decisions.md D12.3):
// each part is a file of a hidden staging folder beside the target, under a name of its own (so
// two requests for one part never write the same file), and completion streams the parts, in
// order, one after the other, into ONE upload of the target, then deletes the staging folder.
// Nothing is held but the bytes in flight, and nothing shows under the target's name before the
// joining upload.
import { FileError, type PartedUpload, type PartedUploads } from "../../drivers/types.ts";
import { concatStreams } from "../../lib/streams.ts";
import { STAGING_PREFIX, type Mounted } from "./mounts.ts";
import { need, putFile, readWhole } from "./operations.ts";
import { joinName } from "./path.ts";

/** The storage's own uploads in parts, else staging on it. */
export function partsOf(mounted: Mounted): PartedUploads {
  return mounted.backend.parts ?? stagedParts(mounted);
}

const randomName = () => crypto.randomUUID().replace(/-/g, "");

function stagedParts(mounted: Mounted): PartedUploads {
  const { backend } = mounted;
  // Refuse at once (AList's `not implement`) what cannot stage.
  const makeDir = need(mounted, "makeDir");
  need(mounted, "put");
  const remove = need(mounted, "remove");
  const staging = (upload: PartedUpload) => joinName(upload.dir, upload.uploadId);
  const at = (actualPath: string): Mounted => ({ ...mounted, actualPath });

  return {
    minPartBytes: 0,
    async begin(dir, name) {
      const uploadId = STAGING_PREFIX + randomName();
      await makeDir(dir, uploadId);
      return { dir, name, uploadId };
    },
    async putPart(upload, index, size, body, signal) {
      const part = `${index}.${randomName()}`;
      await putFile(at(staging(upload)), {
        name: part,
        size,
        body,
        contentType: "application/octet-stream",
        ...(signal ? { signal } : {}),
      });
      return part;
    },
    async complete(upload, tags) {
      const sizes = new Map((await backend.list(staging(upload))).map((entry) => [entry.name, entry.size]));
      const size = tags.reduce((sum, tag) => sum + (sizes.get(tag) ?? 0), 0);
      await putFile(at(upload.dir), {
        name: upload.name,
        size,
        body: concatStreams(
          tags.map((tag) => () => readWhole(backend, joinName(staging(upload), tag), sizes.get(tag) ?? 0)),
        ),
        contentType: "application/octet-stream",
      });
      await remove(staging(upload)).catch(() => undefined);
    },
    async abort(upload) {
      await remove(staging(upload)).catch((error: unknown) => {
        if (!(error instanceof FileError && error.kind === "not_found")) throw error;
      });
    },
  };
}
