// What the admin may save as a meta (AList v3.58.0 server/handles/meta.go:35-80): one meta a path,
// the path cleaned, every hide line a pattern that compiles. Each decision takes plain inputs (the
// parsed body, what the route's plan read) and returns data or throws the refusal (ApiError) the
// wire answers.
import type { Database } from "../../db/client.ts";
import { ApiError, refuseDuplicate } from "../../http/errors.ts";
import { cleanPath } from "../../lib/path.ts";
import { hidePatternIllegal, META_NOT_FOUND, metaExists } from "./messages.ts";
import { deleteMeta, insertMeta, updateMeta, type MetaFields, type MetaRow } from "./store.ts";

/** A meta's fields as the admin sends them (the route's schema fills the defaults). */
export interface MetaInput {
  path: string;
  password: string;
  p_sub: boolean;
  write: boolean;
  w_sub: boolean;
  hide: string;
  h_sub: boolean;
  readme: string;
  r_sub: boolean;
  header: string;
  header_sub: boolean;
}

/** The meta a read found; a missing one is the 404 every meta route answers. */
export function foundMeta(row: MetaRow | undefined): MetaRow {
  if (!row) throw new ApiError(404, META_NOT_FOUND);
  return row;
}

/** The body as a row: the path cleaned, every hide line a pattern that compiles (AList's 400 text). */
function fieldsOf(body: MetaInput): MetaFields {
  for (const line of body.hide.split("\n")) {
    const pattern = line.replace(/\r$/, "");
    if (pattern === "") continue;
    try {
      new RegExp(pattern);
    } catch (error) {
      throw new ApiError(400, hidePatternIllegal(pattern, error instanceof Error ? error.message : String(error)));
    }
  }
  return {
    path: cleanPath(body.path),
    password: body.password,
    passwordSub: body.p_sub,
    write: body.write,
    writeSub: body.w_sub,
    hide: body.hide,
    hideSub: body.h_sub,
    readme: body.readme,
    readmeSub: body.r_sub,
    header: body.header,
    headerSub: body.header_sub,
  };
}

/** Attaches a meta to a path that has none. */
export async function createMeta(db: Database, body: MetaInput): Promise<void> {
  const fields = fieldsOf(body);
  await refuseDuplicate(metaExists(fields.path), insertMeta(db, fields));
}

/** Saves meta `id` whole. */
export async function changeMeta(db: Database, id: number, body: MetaInput): Promise<void> {
  const fields = fieldsOf(body);
  const row = await refuseDuplicate(metaExists(fields.path), updateMeta(db, id, fields));
  if (!row) throw new ApiError(404, META_NOT_FOUND);
}

export async function removeMeta(db: Database, id: number): Promise<void> {
  if (!(await deleteMeta(db, id))) throw new ApiError(404, META_NOT_FOUND);
}
