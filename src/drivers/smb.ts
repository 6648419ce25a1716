// SMB: the check connects and sends an SMB2 NEGOTIATE; an SMB server answers with an SMB header.
// Signing in takes an SMB2 implementation (NTLM), so credentials and the share are checked only
// when files are served.
import { requireText } from "./addition.ts";
import { driverConfig, items } from "./items.ts";
import { openTcp } from "./tcp.ts";
import { CheckFailed, type Driver } from "./types.ts";

export const smb: Driver = {
  config: driverConfig({ name: "SMB", local_sort: true, only_local: true, no_cache: true, default_root: "." }),
  additional: items([
    { name: "root_folder_path", type: "string", default: ".", required: true },
    { name: "address", type: "string", required: true },
    { name: "username", type: "string", required: true },
    { name: "password", type: "string" },
    { name: "share_name", type: "string", required: true },
  ]),
  async check(addition, context) {
    const connection = await openTcp(requireText(addition, "address"), 445, context);
    try {
      await connection.write(NEGOTIATE);
      // NetBIOS session header (4 bytes), then the protocol id: 0xFE "SMB" (SMB2/3) or 0xFF "SMB" (SMB1).
      const reply = await connection.readBytes(8);
      const signature = String.fromCharCode(...reply.subarray(5, 8));
      if ((reply[4] !== 0xfe && reply[4] !== 0xff) || signature !== "SMB") {
        throw new CheckFailed(`${connection.target} is not an SMB server (its answer to SMB2 NEGOTIATE is not SMB)`);
      }
    } finally {
      await connection.close();
    }
  },
};

const DIALECTS = [0x0202, 0x0210, 0x0300, 0x0302];

/** An SMB2 NEGOTIATE request (MS-SMB2 §2.2.3) in a NetBIOS session message. */
const NEGOTIATE = (() => {
  const header = 64;
  const body = 36 + DIALECTS.length * 2;
  const message = new DataView(new ArrayBuffer(4 + header + body));
  message.setUint32(0, header + body); // NetBIOS: type 0, 24-bit length
  for (const [i, byte] of [0xfe, 0x53, 0x4d, 0x42].entries()) message.setUint8(4 + i, byte);
  message.setUint16(8, header, true); // StructureSize
  message.setUint16(4 + 14, 1, true); // CreditRequest; Command 0 = NEGOTIATE, the rest zero
  const start = 4 + header;
  message.setUint16(start, 36, true); // StructureSize
  message.setUint16(start + 2, DIALECTS.length, true);
  message.setUint16(start + 4, 1, true); // SecurityMode: signing enabled
  for (const [i, dialect] of DIALECTS.entries()) message.setUint16(start + 36 + i * 2, dialect, true);
  return new Uint8Array(message.buffer);
})();
