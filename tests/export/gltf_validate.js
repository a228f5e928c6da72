// Validate .glb files with the Khronos glTF Validator (npm gltf-validator, pinned in package.json
// and installed into the repo's node_modules/ by `make node_modules/.installed`, which `make test`
// and `make gltf-validate` run first).
//
//   node tests/export/gltf_validate.js FILE.glb ...            one JSON array of reports, one per file
//   node tests/export/gltf_validate.js --summary FILE.glb ...  a line per file and one per issue;
//                                                               exit 1 when a file has an error
//
// `make gltf-validate FILES="crate.glb valley.glb"` runs the second form (docs/export.md).
"use strict";
const fs = require("fs");
const path = require("path");
const validator = require("gltf-validator");

const SEVERITY = ["error", "warning", "info", "hint"];

async function validate(file) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  return validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0, // every issue
    externalResourceFunction: (uri) => Promise.reject(new Error(`external resource ${uri}: a .glb embeds everything`)),
  });
}

async function main(args) {
  const summary = args[0] === "--summary";
  const files = summary ? args.slice(1) : args;
  if (!summary) {
    const reports = [];
    for (const file of files) reports.push(await validate(file));
    process.stdout.write(JSON.stringify(reports) + "\n");
    return 0;
  }
  let errors = 0;
  for (const file of files) {
    let report;
    try {
      report = await validate(file);
    } catch (err) { // not a glTF file at all, or unreadable
      errors += 1;
      process.stdout.write(`${file}: INVALID (${String(err && err.message || err).trim()})\n`);
      continue;
    }
    const n = report.issues;
    errors += n.numErrors;
    const verdict = n.numErrors ? "INVALID" : "valid";
    process.stdout.write(`${file}: ${verdict} (${n.numErrors} errors, ${n.numWarnings} warnings, ` +
                         `${n.numInfos} infos, ${n.numHints} hints)\n`);
    for (const m of n.messages.filter((m) => m.severity <= 1)) {
      process.stdout.write(`  ${SEVERITY[m.severity]} ${m.code} at ${m.pointer || "/"}: ${m.message}\n`);
    }
  }
  return errors ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
  process.stderr.write(String(err && err.stack || err) + "\n");
  process.exit(2);
});
