// The messages the storage routes answer, each defined once (AList's texts where it has them,
// grammar included: clients and the web UI show them as they are).

export const STORAGE_NOT_FOUND = "storage not found";
export const DRIVER_UNCHANGEABLE = "driver cannot be changed";
export const ALREADY_ENABLED = "this storage have enabled";
export const ALREADY_DISABLED = "this storage have disabled";
export const ADDITION_NOT_AN_OBJECT = "addition must be a JSON object encoded as a string";
export const ID_REQUIRED = "id: is required";
export const ID_NOT_POSITIVE = "id: must be a positive integer";

export const mountPathTaken = (mountPath: string) => `mount path ${mountPath} is already used`;

/** A delete refused while roles' scopes or users' base paths still point into the storage. */
export const storageInUse = (usedBy: readonly string[]) =>
  `storage is used by ${usedBy.join(", ")}, please cancel usage first`;

/** A template choice (order_by, webdav_policy, …) outside the driver's options; `allowed` says what is. */
export const choiceNotAllowed = (name: string, allowed: string, driver: string) =>
  `${name} must be ${allowed} for driver ${driver}`;

/** The check failed after a create: AList keeps the row and says so (code 500, with its id). */
export const createdButFailed = (status: string) => `failed init storage but storage is already created: ${status}`;
export const savedButFailed = (status: string) => `failed init storage: ${status}`;
export const enabledButFailed = (status: string) => `failed load storage: ${status}`;
