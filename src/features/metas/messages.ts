// The messages the meta admin routes answer, each defined once.

export const META_NOT_FOUND = "meta not found";
export const metaExists = (path: string) => `a meta for ${path} already exists`;

/** A hide line that is not a regular expression; `reason` is the engine's (AList's shape of text). */
export const hidePatternIllegal = (pattern: string, reason: string) => `${pattern} is illegal: ${reason}`;
