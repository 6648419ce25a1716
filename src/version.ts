/** Gatehouse's own release (package.json), sent as X-Gatehouse-Version. Clients read `v3.58.0` from settings instead. */
export const GATEHOUSE_VERSION = "0.1.0";
