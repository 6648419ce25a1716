// Property-based input fuzzing (test/support/fuzz.ts) of user and role administration: creates
// reuse a taken name or a missing role, updates and deletes name ids that do not exist.
import { registerFuzzSuite } from "../support/fuzz.ts";

registerFuzzSuite("users-roles");
