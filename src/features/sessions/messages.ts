// The messages the device-session routes answer, each defined once (AList's text).

/** Someone else's session and a missing one answer alike. */
export const SESSION_NOT_FOUND = "failed find session: record not found";
