// Who a request comes from, as the guard (auth/guard.ts) and the WebDAV server (features/dav/auth.ts)
// resolve it. Types only, so the request context can name it without importing the guard.
import type { RoleRow, UserRow } from "./store.ts";

export interface Caller {
  user: UserRow;
  roles: RoleRow[];
  /** `basic`: HTTP Basic on the WebDAV server (features/dav/auth.ts). */
  via: "session" | "permanent_token" | "guest" | "basic" | "access_key";
  /** The device session a JWT names; null for the guest and the permanent token. */
  deviceKey: string | null;
  /**
   * The access key the request came with (docs/decisions.md D16); `user` and `roles` are then
   * already cut to its folder and rights (auth/access-keys.ts keyCaller).
   */
  key?: { id: number; path: string; permission: number };
}
