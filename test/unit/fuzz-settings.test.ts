// Property-based input fuzzing (test/support/fuzz.ts) of the settings group. Saves always carry an
// unknown or repeated key, so they are refused as a whole; aria2 and qBittorrent never get a
// request that passes validation with a fetchable URL; reset_token's new token is put back.
import { registerFuzzSuite } from "../support/fuzz.ts";

registerFuzzSuite("settings");
