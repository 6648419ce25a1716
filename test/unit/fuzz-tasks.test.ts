// Fuzzing the task routes (test/support/fuzz.ts): random query strings and bodies, never a crash.
import { registerFuzzSuite } from "../support/fuzz.ts";

registerFuzzSuite("tasks");
