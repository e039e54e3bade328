/**
 * `npm run bench:cold-start`: every function's bundle against a Powertools-based equivalent of the
 * processor (tools/bench/src/powertools-processor: Powertools' batch, idempotency, logger and metrics
 * with the DynamoDB document client), built the same way in the same run. For each bundle: the zip,
 * the code, the largest packages (esbuild's metafile), the import time of `index.mjs` in fresh Node 22
 * processes (Lambda's init phase without the runtime's own start; wall clock and CPU), and for the
 * processor and the equivalent the first invocation after import, a batch against the emulators.
 * Processes are interleaved round by round, so a busy moment of the machine hits every bundle alike.
 * Writes docs/benchmarks/cold-start.md.
 */
import { execFile } from "node:child_process";
import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import { onDemandTable } from "@mcp-pipeline/aws";
import { bundleFunction } from "@mcp-pipeline/bundler";
import { unzipTo } from "@mcp-pipeline/local-runtime";
import { toolCallsTableDefinition } from "@mcp-pipeline/tool-calls";
import { Stack, startedRecords } from "../../../functions/processor/test/stack.ts";
import { writePage } from "./lib/write-page.ts";

const root = join(import.meta.dirname, "../../..");
/** `npm run bench:cold-start -- --runs=15` for more rounds. */
const RUNS = Number(process.argv.find((a) => a.startsWith("--runs="))?.slice("--runs=".length) ?? 9);
const RECORDS = 10;
const EQUIVALENT = "powertools-processor";
const probe = join(import.meta.dirname, "cold-start-probe.mjs");
const run = promisify(execFile);

if (process.versions.node.split(".")[0] !== "22") {
  throw new Error(`run on Node 22 (the functions' runtime), not ${process.versions.node}: use npm run`);
}

interface Bundle {
  readonly name: string;
  readonly dir: string;
  readonly zipBytes: number;
  readonly codeBytes: number;
  /** What an import of index.mjs loads: index.mjs and the chunks it imports statically. */
  readonly importedBytes: number;
  readonly file: string;
  readonly largest: string;
}

interface Sample {
  readonly importMs: number;
  readonly importCpuMs: number;
  readonly invokeMs?: number;
  readonly response?: { batchItemFailures?: unknown[] };
}

interface Metafile {
  outputs: Record<
    string,
    {
      bytes: number;
      inputs: Record<string, { bytesInOutput: number }>;
      imports: { path: string; kind: string }[];
    }
  >;
}

/** The three largest packages (or workspace folders) that an import loads, by bytes in the output. */
function largestPackages(metafile: Metafile): string {
  const inputs = imported(metafile).flatMap((path) => Object.entries(metafile.outputs[path]?.inputs ?? {}));
  const sizes = new Map<string, number>();
  for (const [path, { bytesInOutput }] of inputs) {
    const inPackage = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    const name =
      inPackage?.[1] ??
      path
        .replace(/^(\.\.\/)+/, "")
        .split("/")
        .slice(0, 2)
        .join("/");
    sizes.set(name, (sizes.get(name) ?? 0) + bytesInOutput);
  }
  return [...sizes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name, bytes]) => `${name} ${kib(bytes)}`)
    .join(", ");
}

/** index.mjs and every chunk it reaches through static imports: what an import loads (not dynamic imports). */
function imported(metafile: Metafile): string[] {
  const seen = new Set<string>();
  const visit = (path: string | undefined) => {
    const output = path === undefined ? undefined : metafile.outputs[path];
    if (!path || !output || seen.has(path)) return;
    seen.add(path);
    for (const i of output.imports) if (i.kind === "import-statement") visit(i.path);
  };
  visit(Object.keys(metafile.outputs).find((path) => path.endsWith("index.mjs")));
  return [...seen];
}

const importedBytes = (metafile: Metafile) =>
  imported(metafile).reduce((sum, path) => sum + (metafile.outputs[path]?.bytes ?? 0), 0);

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

async function build(name: string, dir: string, work: string): Promise<Bundle> {
  const out = join(work, name);
  const { codeBytes } = await bundleFunction(dir, out);
  const zip = join(out, `${name}.zip`);
  const file = await unzipTo(await readFile(zip), join(out, "code"));
  const metafile = JSON.parse(await readFile(join(out, "meta.json"), "utf8"));
  return {
    name,
    dir,
    zipBytes: (await stat(zip)).size,
    codeBytes,
    importedBytes: importedBytes(metafile),
    file,
    largest: largestPackages(metafile),
  };
}

async function coldStart(bundle: Bundle, env: NodeJS.ProcessEnv, eventFile?: string): Promise<Sample> {
  const { stdout } = await run(process.execPath, [probe, bundle.file, ...(eventFile ? [eventFile] : [])], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.split("\n").find((l) => l.startsWith("COLD_START "));
  if (!line) throw new Error(`${bundle.name}: the probe printed no result:\n${stdout}`);
  return JSON.parse(line.slice("COLD_START ".length)) as Sample;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const range = (xs: readonly number[]) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} ms`;

/** The one-minute load average, to say whether the figures come from a busy machine. */
const loadAtStart = loadavg()[0] ?? 0;
const work = join(tmpdir(), `cold-start-${process.pid}`);
const bundles: Bundle[] = [];
const samples = new Map<string, Sample[]>();
const quarantineRuns: number[] = [];
const stack = await Stack.start();
try {
  const functions = (await readdir(join(root, "functions"), { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  for (const name of functions) bundles.push(await build(name, join(root, "functions", name), work));
  bundles.push(await build(EQUIVALENT, join(import.meta.dirname, "powertools-processor"), work));

  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL_DYNAMODB: stack.endpoints.dynamo,
    AWS_ENDPOINT_URL_S3: stack.endpoints.s3,
    METRICS_NAMESPACE: "ColdStartBench",
  };
  const { records } = startedRecords(RECORDS, 3);
  const eventFile = join(work, "event.json");
  await writeFile(eventFile, JSON.stringify({ Records: records }));

  for (let round = 0; round < RUNS; round++) {
    // Fresh tables each round, so that every first invocation finds no idempotency record.
    await stack.reset();
    // The equivalent gets tables of its own: Powertools' idempotency table is keyed by `id`.
    const powertools = {
      toolCalls: `powertools-tool-calls-${stack.tableIndex}`,
      idempotency: `powertools-idempotency-${stack.tableIndex}`,
    };
    await stack.toolCallsClient.send(new CreateTableCommand(toolCallsTableDefinition(powertools.toolCalls)));
    await stack.toolCallsClient.send(new CreateTableCommand(onDemandTable(powertools.idempotency, "id")));
    // Alternate the order, so that neither side always runs right after the other.
    const order = round % 2 === 0 ? bundles : [...bundles].reverse();
    for (const bundle of order) {
      const invoke = bundle.name === "processor" || bundle.name === EQUIVALENT;
      const env: NodeJS.ProcessEnv = {
        ...base,
        TOOL_CALLS_TABLE: bundle.name === EQUIVALENT ? powertools.toolCalls : stack.tables.toolCalls,
        DEDUPE_TABLE: bundle.name === EQUIVALENT ? powertools.idempotency : stack.tables.dedupe,
        QUARANTINE_BUCKET: stack.tables.bucket,
      };
      const sample = await coldStart(bundle, env, invoke ? eventFile : undefined);
      if (invoke && (sample.response?.batchItemFailures?.length ?? -1) !== 0) {
        throw new Error(`${bundle.name}: the batch did not succeed: ${JSON.stringify(sample.response)}`);
      }
      samples.set(bundle.name, [...(samples.get(bundle.name) ?? []), sample]);
    }
    process.stdout.write(`round ${round + 1}/${RUNS}\n`);
  }
  const applied = (await stack.calls()).size;
  if (applied !== RECORDS) throw new Error(`the last round applied ${applied} of ${RECORDS} calls`);

  // The rare path, measured apart: the same batch plus one record that is not JSON, so that the first
  // invocation also loads the S3 client and the quarantine writer (lazyS3Client) and stores the record.
  const processor = bundles.find((b) => b.name === "processor");
  const badFile = join(work, "event-with-bad-record.json");
  const bad = {
    ...records[0],
    kinesis: { ...records[0]?.kinesis, data: Buffer.from("{oops").toString("base64") },
  };
  await writeFile(badFile, JSON.stringify({ Records: [...records, bad] }));
  for (let round = 0; processor && round < RUNS; round++) {
    await stack.reset();
    const sample = await coldStart(
      processor,
      {
        ...base,
        TOOL_CALLS_TABLE: stack.tables.toolCalls,
        DEDUPE_TABLE: stack.tables.dedupe,
        QUARANTINE_BUCKET: stack.tables.bucket,
      },
      badFile,
    );
    const stored = (await stack.quarantined()).length;
    if ((sample.response?.batchItemFailures?.length ?? -1) !== 0 || stored !== 1) {
      throw new Error(`processor: the bad record was not quarantined: ${JSON.stringify(sample.response)}`);
    }
    quarantineRuns.push(sample.invokeMs ?? 0);
  }
} finally {
  await stack.stop();
  await rm(work, { recursive: true, force: true });
}

const rows = bundles.map((bundle) => {
  const runs = samples.get(bundle.name) ?? [];
  const wall = runs.map((s) => s.importMs);
  const cpu = runs.map((s) => s.importCpuMs);
  const invoke = runs.flatMap((s) => (s.invokeMs === undefined ? [] : [s.invokeMs]));
  const label = bundle.name === EQUIVALENT ? `${EQUIVALENT} (equivalent)` : bundle.name;
  return {
    name: bundle.name,
    wall: median(wall),
    cpu: median(cpu),
    line: `| ${label} | ${kib(bundle.zipBytes)} | ${kib(bundle.codeBytes)} | ${kib(bundle.importedBytes)} | ${median(wall).toFixed(0)} ms | ${range(wall)} | ${median(cpu).toFixed(0)} ms | ${invoke.length ? `${median(invoke).toFixed(0)} ms (${range(invoke)})` : "-"} | ${bundle.largest} |`,
  };
});
for (const row of rows) process.stdout.write(`${row.line}\n`);

const equivalent = rows.find((r) => r.name === EQUIVALENT);
const verdicts = rows
  .filter((r) => r.name !== EQUIVALENT && equivalent)
  .map(
    (r) =>
      `- ${r.name}: import ${r.wall.toFixed(0)} ms against ${equivalent?.wall.toFixed(0)} ms, ${r.wall <= (equivalent?.wall ?? 0) ? "at or below" : "above"} the equivalent; CPU ${r.cpu.toFixed(0)} against ${equivalent?.cpu.toFixed(0)} ms, ${r.cpu <= (equivalent?.cpu ?? 0) ? "at or below" : "above"}`,
  );

const loadAtEnd = loadavg()[0] ?? 0;
const busy = Math.max(loadAtStart, loadAtEnd) > cpus().length;
const machineLoad = `Load average (one minute) ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end, on ${cpus().length} cores: ${
  busy
    ? "a loaded machine (other work ran alongside), so the absolute times are inflated and noisy; the rows are interleaved, so compare them with each other"
    : "an idle machine"
}.`;

const report = `# Cold start: bundle size and load time

Measured by \`npm run bench:cold-start\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? "CPU"},
Node ${process.versions.node}. Every function is built as \`npm run build\` builds it (tools/bundler), and so
is **${EQUIVALENT}**: the processor's job (apply each lifecycle event of a Kinesis batch to the tool-calls
table once, partial batch response) written on Powertools' batch, idempotency, logger and metrics with the
DynamoDB document client (tools/bench/src/powertools-processor), as the yardstick.

Import is a fresh Node process importing the bundle's \`index.mjs\`: module parsing and top-level evaluation,
which is what Lambda's init phase adds to the runtime's own start; wall clock (median and range) and the
process's CPU time (median; steadier when the machine is shared). First invocation is the handler's first
call in that process, right after the import: a batch of ${RECORDS} \`tool_call.started\` records against DynamoDB
and S3 emulators on 127.0.0.1, fresh tables each round (clients, configuration and connections are built
then). ${RUNS} rounds, bundles interleaved, order alternating; the machine is shared, so compare the rows of one
run with each other, not with other days.

${machineLoad}

| Bundle | Zip | Code | Code at import | Import median | Import range | Import CPU | First invocation | Largest packages at import |
| ------ | --- | ---- | -------------- | ------------- | ------------ | ---------- | ---------------- | ---------------- |
${rows.map((r) => r.line).join("\n")}

${verdicts.join("\n")}

The rare path: the processor's first invocation with the same batch plus one record that is not JSON (so it
also loads the S3 client and the quarantine writer, and stores the record): median ${median(quarantineRuns).toFixed(0)} ms (${quarantineRuns.length ? range(quarantineRuns) : "-"}),
against ${median((samples.get("processor") ?? []).flatMap((x) => (x.invokeMs === undefined ? [] : [x.invokeMs]))).toFixed(0)} ms for the clean batch.

What keeps the import short: every zip is code-split (tools/bundler): index.mjs imports the
chunks it needs, and what only a dynamic import reaches is in chunks of its own that an import neither parses
nor evaluates ("Code at import" counts index.mjs and the chunks it imports statically; "Code" is the whole
zip). The processor's quarantine (the writer and the S3 client that only a bad record needs) is such a chunk
set (functions/processor/src/quarantine-writer.ts), as are the workers' S3 result write (\`lazyS3Client\`, on the
first result over the inline limit), their DLQ send with its SQS client (packages/worker/src/dead-letter-queue.ts,
on the first poison message; a failed load fails that message, which SQS redelivers) and dlq-redrive's SQS
client (functions/dlq-redrive/src/sqs.ts: only a message that is not an on-failure record, sent to the DLQ, and
a manual DLQ redrive need it) and its quarantine replay (functions/dlq-redrive/src/replay.ts: only a manual
replay runs it). Nothing on the import path loads zod or Ajv. The lifecycle events and jobs,
dlq-redrive's on-failure records and manual actions, the quarantine format and every function's configuration
are each declared once with @mcp-pipeline/contracts/light-schema (small typed builders with zod's semantics and
messages, checked against zod by packages/contracts/test/unit/light-schema.test.ts), and checked with that
declaration; the workers check tool arguments with validators compiled at build time by Ajv's \`standalone\` module
(\`npm run generate:validators\`), held to Ajv's start-up compiler by packages/tools/test/unit/input-validators.test.ts.

Why a chunk loaded on first use stays out of the import: esbuild assigns whole files to chunks by static
reachability before it shakes unused exports, so a file that a lazy chunk uses and that index.mjs reaches
through a barrel's unused re-export went into a chunk that index.mjs imports. The SDK imports through barrels
(\`import { AwsJson1_0Protocol } from "@aws-sdk/core/protocols"\`, whose index re-exports the XML protocol too), and
so did our packages' index.ts files: the S3 client's XML protocol and checksum streams (which touch Node's web
streams at load) were loaded by every function whose S3 client is lazy, and recovery's index put the SQS
commands on dlq-redrive's import path. tools/bundler/src/direct-imports.ts rewrites every named import and
re-export, the SDK's and ours, to name the module that defines it (in every bundle, the equivalent's too; an SDK barrel that also has code of its own
is split in two, its own code a module that both ways of importing it share), held to the barrels as written by
scripts/test/integration/build.test.ts. The S3, Kinesis and SQS client factories are also subpath entries of
@mcp-pipeline/aws (\`/s3-client\`, \`/kinesis-client\`, \`/sqs-client\`), not index exports.

What no function runs is not in the zip either: event streams. Only a few operations answer with one (Kinesis's
SubscribeToShard, S3's SelectObjectContent), yet every client built the event-stream marshaller when constructed
and the Kinesis client named Node's HTTP/2 handler, its default for SubscribeToShard, so the workers and
dlq-redrive loaded the event-stream codec and \`node:http2\` (the costliest of Node's own modules to load) at every
cold start. The bundle resolves them (the marshaller, the HTTP/2 handler, and the event-stream module that
the HTTP protocol would import for such an operation) to stand-ins that fail with the cause if used
(packages/aws/src/without-event-streams.ts); the client factories give every client an HTTP/1.1 handler.

Nor is what a function never reads or never runs (issue 27, item 4; zip bytes of tool-worker, fifo-worker,
dlq-redrive and processor after each step, \`npm run build\`):

| Step                                                    | tool-worker | fifo-worker | dlq-redrive | processor |
| ------------------------------------------------------- | ----------- | ----------- | ----------- | --------- |
| before (main at 9d3ef4e)                                | 162,408     | 162,410     | 146,007     | 134,939   |
| each function's own part of function-environment.json   | 161,579     | 161,581     | 145,037     | 133,958   |
| an SDK client's package.json as its name and version    | 158,589     | 158,591     | 142,241     | 132,038   |
| no S3 flexible checksums                                | 154,501     | 154,503     | 137,987     | 127,890   |
| no JavaScript SHA-256, MD5, SHA-1                       | 151,272     | 151,274     | 134,864     | 124,655   |
| dlq-redrive's replay loaded on first use                | 151,272     | 151,274     | 137,923     | 124,655   |

- each function's own part of terraform/modules/pipeline/function-environment.json: a function's config.ts asks
  for its tuning by name (\`functionTuning(fn)\`, @mcp-pipeline/settings/tuning), and the bundler projects the
  file, at build time, to that function's tuning and the sources' ranges (tools/bundler/src/projected-json.ts);
  the other functions, the \`wired\` map and the descriptions were 4.7 KiB of every zip and import;
- an SDK client's package.json as its name and version, the one field its code reads (the user agent's
  client version); the whole file is about 2.4 KiB a client, four in a worker;
- no S3 flexible checksums: the SDK's default adds a CRC32 to every PutObject and validates one on every
  GetObject; the functions' S3 writes are string bodies, which SigV4 signs by their SHA-256
  (x-amz-content-sha256, which S3 checks), so @mcp-pipeline/aws's S3 client computes and validates them only
  where an operation requires one (\`WHEN_REQUIRED\`), and the bundle's plugin lets through what the SDK's
  would leave as it is and refuses what it would have checksummed (packages/aws/src/without-flexible-checksums.ts):
  the middleware, CRC tables and checksum streams are gone from every zip with an S3 client;
- no JavaScript SHA-256, MD5 or SHA-1: each is the fallback of a Node class for a Node whose crypto lacks
  the algorithm, which Lambda's has (packages/aws/src/without-js-hashes.ts); this and the package.json
  projection apply to the equivalent's bundle too;
- dlq-redrive's quarantine replay (functions/dlq-redrive/src/replay.ts) a chunk loaded on first use: only a
  manual invocation runs it. Its code at import loses that chunk's 10,786 bytes (342,538 left, by the
  metafile); its zip gains 3,059 (one more chunk, compressed apart from the rest).

What a smaller S3 path would save, measured and not taken: the workers' zips without the chunk that holds the
S3 client (loaded on the first result over the inline limit) are 122,507 bytes, 28,765 less; the processor's
without its quarantine's S3 chunk 95,694, 28,961 less (the replacement, SigV4-signed requests through the
bundled \`@smithy/signature-v4\` and HTTP handler, would add some of it back). Neither is on an import path, and
the zips are within 150 KiB without it; dlq-redrive, whose S3 client is on its import path, lists the quarantine
(ListObjectsV2, XML) besides writing to it, which a hand-written path would have to parse too.

What keeps the zips small, all in tools/bundler/src/bundle-function.ts and so in every bundle, the equivalent's too:
- one copy of each package: the S3 client is pinned at the root (package.json), since a test dependency's newer
  one, hoisted there, gave each workspace a copy of its own and the bundles two or three; the build now refuses
  a package bundled from two node_modules folders;
- the SDK clients' schemas written with literal keys (\`{ "httpHeader": _xaa }\` for \`{ [_hH]: _xaa }\`), so
  that esbuild drops the schemas of operations a function never calls (S3's 64 KiB down to about 8; the test
  in scripts/test/integration/build.test.ts bundles every S3 schema both ways and compares them);
- Lambda's credential chain (environment, then container credentials over HTTP) in place of the SDK's default
  one, whose other links (profiles, SSO, \`aws login\`, credential_process, web identity, instance metadata)
  and the STS, SSO and sign-in clients they need never run in a function
  (packages/aws/src/lambda-credentials.ts; tests and tools keep the SDK's chain);
- no \`bowser\`, the browser's user-agent parser, which @aws-sdk/core's Node entry reaches through a dynamic
  import that Node never runs;
- @aws-sdk/lib-dynamodb bundled as free of side effects (its package.json does not say so, its siblings' do),
  so that dlq-redrive, which never calls DynamoDB, does not load the DynamoDB client.
Every bundle includes the AWS SDK clients it uses (bundled, not taken from the runtime, so the deployed code
is the tested code).

What still costs: the SDK clients each function calls on its hot path, and the \`@smithy/core\` they share.
The workers load DynamoDB and Kinesis at import because every job uses both (the call's state and idempotency,
and its lifecycle events): loaded on first use, they would load in the first invocation all the same. dlq-redrive
is invoked with failure records, each re-read from Kinesis and written to the quarantine in S3, so both clients
stay on its import path for the same reason: two SDK clients (Kinesis, and S3 with its XML protocol) where the
equivalent loads one (DynamoDB), the most code at import of any row.
`;
const doc = join(root, "docs", "benchmarks", "cold-start.md");
await writePage(doc, report);
process.stdout.write("docs/benchmarks/cold-start.md written\n");
