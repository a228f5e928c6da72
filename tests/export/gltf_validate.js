// Validate .glb files with the Khronos glTF Validator (npm gltf-validator, installed into the
// repo's node_modules/ by `make node_modules`): prints one JSON array of reports, one per file
// argument, in argument order. Usage: node tests/export/gltf_validate.js FILE.glb ...
"use strict";
const fs = require("fs");
const path = require("path");
const validator = require("gltf-validator");

async function main(files) {
  const reports = [];
  for (const file of files) {
    const bytes = new Uint8Array(fs.readFileSync(file));
    const report = await validator.validateBytes(bytes, {
      uri: path.basename(file),
      maxIssues: 0, // every issue
      externalResourceFunction: (uri) => Promise.reject(new Error(`external resource ${uri}: a .glb embeds everything`)),
    });
    reports.push(report);
  }
  process.stdout.write(JSON.stringify(reports) + "\n");
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(String(err && err.stack || err) + "\n");
  process.exit(1);
});
