// Property-based input fuzzing (test/support/fuzz.ts) of the file API's reads and the meta admin:
// reads climb with `..` (refused), meta writes carry a hide line that is no pattern or an id that
// does not exist, so nothing changes.
import { registerFuzzSuite } from "../support/fuzz.ts";

registerFuzzSuite("fs-metas");
