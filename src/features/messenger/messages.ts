// Every text the messenger answers (OpenList internal/message/http.go's where it has them).

/** The inbox is empty: OpenList's answer, which the web UI's messenger page polls past quietly. */
export const NO_MESSAGE = "no message";

/** Nothing in Gatehouse ever waits for a message from the web UI (docs/decisions.md D18.2). */
export const SEND_REFUSED =
  "nowhere needed: Gatehouse runs no process that reads messages from the web UI, so a message would be lost";
