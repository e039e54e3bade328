/**
 * `npm run bench:cold-start`: the size of each function's zip and code, and how long a fresh isolate
 * takes to load it (Lambda's init phase, without the runtime's own start), median of several runs.
 * Writes docs/benchmarks/cold-start.md. Run after `npm run build`.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { unzip } from "../lib/unzip.ts";

const root = join(import.meta.dirname, "../..");
const RUNS = 7;

function loadOnce(file: string): Promise<number> {
  const source = `
    const { parentPort } = require("node:worker_threads");
    const started = performance.now();
    import(${JSON.stringify(`file://${file}`)}).then(() => parentPort.postMessage(performance.now() - started));
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, env: { AWS_REGION: "us-east-1" } });
    worker.once("message", (ms: number) => {
      void worker.terminate();
      resolve(ms);
    });
    worker.once("error", reject);
  });
}

const manifest = JSON.parse(await readFile(join(root, "dist", "manifest.json"), "utf8")) as {
  artifacts: Record<string, { path: string; sizeBytes: number }>;
};
const work = await mkdtemp(join(tmpdir(), "cold-start-"));
const rows: string[] = [];
try {
  for (const [name, artifact] of Object.entries(manifest.artifacts).sort()) {
    const code =
      unzip(await readFile(join(root, artifact.path))).get("index.mjs")?.content ?? Buffer.alloc(0);
    const file = join(work, `${name}.mjs`);
    await writeFile(file, code);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await loadOnce(file));
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)] ?? 0;
    rows.push(
      `| ${name} | ${(artifact.sizeBytes / 1024).toFixed(0)} KiB | ${(code.length / 1024).toFixed(0)} KiB | ${median.toFixed(0)} ms | ${(times[0] ?? 0).toFixed(0)}-${(times.at(-1) ?? 0).toFixed(0)} ms |`,
    );
    process.stdout.write(`${rows.at(-1)}\n`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

const report = `# Cold start: bundle size and load time

Measured by \`npm run bench:cold-start\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "CPU"},
Node ${process.versions.node}. Load time is a fresh V8 isolate (a worker thread) importing the bundle's
\`index.mjs\`: module parsing and top-level evaluation, which is what Lambda's init phase adds to the
runtime's own start. Clients and configuration are built on the first invocation, not at import. ${RUNS} runs
each; the machine is shared, so compare the functions with each other, not with other days.

| Function | Zip | Code | Median load | Range |
| -------- | --- | ---- | ----------- | ----- |
${rows.join("\n")}

The workers carry Ajv (JSON Schema) and the tool catalogue, dlq-redrive carries the S3 and Kinesis clients;
every bundle includes the AWS SDK clients it uses (bundled, not taken from the runtime, so the deployed code
is the tested code).
`;
await writeFile(join(root, "docs", "benchmarks", "cold-start.md"), report);
process.stdout.write("docs/benchmarks/cold-start.md written\n");
