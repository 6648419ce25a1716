// Runs first in `npm start` and `npm test`, before anything touches the database: wrangler,
// miniflare and the Workers test pool need Node 22. npm scripts normally run on the Node 22 that
// npm ci installs (optionalDependencies node-<platform>-<arch>); this catches a platform without one.
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(
    `Gatehouse needs Node.js 22 or newer; this is ${process.version} on ${process.platform}-${process.arch}, ` +
      "for which no Node 22 package is installed. Install Node 22 (https://nodejs.org) and run npm ci again.",
  );
  process.exit(1);
}
