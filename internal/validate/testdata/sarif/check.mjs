// Validates SARIF files against the SARIF 2.1.0 JSON schema (draft-04),
// then checks what GitHub code scanning requires beyond the schema.
// Usage: node check.mjs FILE...; exit 1 with the errors on failure.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Ajv = require("ajv-draft-04");
const addFormats = require("ajv-formats");
const schema = require("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");

// unicodeRegExp: false because the schema has a pattern (language tags) that
// is not valid under the u flag.
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validate = ajv.compile(schema);

let failed = false;
const fail = (file, msg) => {
  failed = true;
  console.error(`${file}: ${msg}`);
};

for (const file of process.argv.slice(2)) {
  const log = JSON.parse(readFileSync(file, "utf8"));
  if (!validate(log)) {
    for (const e of validate.errors) fail(file, `schema: ${e.instancePath || "/"} ${e.message}`);
  }
  // GitHub code scanning: version 2.1.0, a driver name, results whose rule
  // is described, and locations with a relative URI and a line >= 1.
  if (log.version !== "2.1.0") fail(file, `version ${log.version}`);
  for (const [i, run] of (log.runs || []).entries()) {
    const driver = run.tool?.driver ?? {};
    if (!driver.name) fail(file, `runs[${i}].tool.driver.name is missing`);
    const ids = new Set((driver.rules || []).map((r) => r.id));
    for (const [j, res] of (run.results || []).entries()) {
      const where = `runs[${i}].results[${j}]`;
      if (!ids.has(res.ruleId)) fail(file, `${where}.ruleId ${res.ruleId} is not in tool.driver.rules`);
      if (res.ruleIndex !== undefined && driver.rules[res.ruleIndex]?.id !== res.ruleId) fail(file, `${where}.ruleIndex does not point at ${res.ruleId}`);
      if (!res.message?.text) fail(file, `${where}.message.text is empty`);
      if (!res.locations?.length) fail(file, `${where} has no location`);
      for (const loc of res.locations || []) {
        const uri = loc.physicalLocation?.artifactLocation?.uri;
        if (!uri || /^[a-z]+:/i.test(uri) || uri.startsWith("/")) fail(file, `${where}: uri ${uri} is not relative`);
        const line = loc.physicalLocation?.region?.startLine;
        if (line !== undefined && line < 1) fail(file, `${where}: startLine ${line}`);
      }
    }
  }
}
if (failed) process.exit(1);
console.log("sarif: valid");
