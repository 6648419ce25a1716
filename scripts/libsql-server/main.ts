// CLI for the local libSQL endpoint (DEVELOPMENT TOOLING; production uses Turso or sqld):
//
//   tsx scripts/libsql-server/main.ts [--file .data/gatehouse.db] [--port 8080] [--host 127.0.0.1]
//                                     [--auth-token TOKEN]
//
// Serves Hrana over HTTP on the given SQLite file until SIGINT or SIGTERM. Clients need the bearer
// token: --auth-token, else LIBSQL_AUTH_TOKEN, else a random one printed on the second line.

import { resolve } from "node:path";
import { parseArgs } from "node:util";

import { startLibsqlServer } from "./server.ts";

const usage = "usage: tsx scripts/libsql-server/main.ts [--file PATH] [--port PORT] [--host HOST] [--auth-token TOKEN]";

function commandLine() {
  try {
    return parseArgs({
      options: {
        file: { type: "string", default: ".data/gatehouse.db" },
        port: { type: "string", default: "8080" },
        host: { type: "string", default: "127.0.0.1" },
        "auth-token": { type: "string" },
      },
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
}
const values = commandLine();

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be an integer between 0 and 65535\n${usage}`);
  process.exit(2);
}

const file = resolve(values.file);
const server = await startLibsqlServer({
  path: file,
  port,
  host: values.host,
  authToken: values["auth-token"] || process.env.LIBSQL_AUTH_TOKEN,
  log: (line) => console.log(line),
});
console.log(`libSQL endpoint listening on ${server.url} (file: ${file})`);
console.log(`auth token: ${server.authToken}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
