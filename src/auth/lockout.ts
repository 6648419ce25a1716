// Sign-in lockout (docs/decisions.md D4.4). Failures are counted in the database (isolates share nothing),
// per client address and per username, each in a window that ends 5 minutes after its last failure.
//   - an address with 5 failures is locked out, whatever username it tries;
//   - a username with 5 failures is locked out from every address that has failed itself,
//     so spreading guesses over many addresses buys one guess per address, while the owner
//     signing in from a clean address is never locked out.
// Every attempt is counted before its password is checked, in the statement that reads the count,
// so N parallel guesses get N different counts and at most 5 are checked; a successful sign-in
// clears both counters. Nothing outlives its window.

export const MAX_FAILURES = 5;
export const FAILURE_WINDOW_SECONDS = 300;
// The refusal's text is LOCKED_OUT_MESSAGE in messages.ts.

export interface FailureCounts {
  ip: number;
  user: number;
}

export function isLockedOut(failures: FailureCounts): boolean {
  return failures.ip >= MAX_FAILURES || (failures.user >= MAX_FAILURES && failures.ip > 0);
}
