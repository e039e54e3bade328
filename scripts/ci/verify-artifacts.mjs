// The workflows' check that every artifact downloaded is the one dist/manifest.json names (SHA-256,
// base64, as Terraform's filebase64sha256). Plain Node, no dependencies: it runs before `npm ci`.
// Usage: node scripts/ci/verify-artifacts.mjs dist/manifest.json
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const file = process.argv[2];
if (file === undefined) {
  console.error("usage: node scripts/ci/verify-artifacts.mjs dist/manifest.json");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(file, "utf8"));
let failed = false;
for (const [name, artifact] of Object.entries(manifest.artifacts)) {
  const sha = createHash("sha256").update(readFileSync(artifact.path)).digest("base64");
  if (sha !== artifact.sha256) {
    console.error(`${name}: sha256 ${sha}, the manifest says ${artifact.sha256}`);
    failed = true;
  } else console.log(`${name} ${artifact.sha256}`);
}
process.exit(failed ? 1 : 0);
