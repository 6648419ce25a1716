// Property-based input fuzzing (test/support/fuzz.ts) of device-session eviction and SSH keys:
// random session ids never name a real session, and random key ids never a real key.
import { registerFuzzSuite } from "../support/fuzz.ts";

registerFuzzSuite("sessions-sshkeys");
