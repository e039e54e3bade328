import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PutRecordCommand } from "@aws-sdk/client-kinesis";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  base64Sha256,
  bundleFunction,
  directModules,
  duplicatedPackages,
  LAMBDA_CREDENTIALS,
  withLiteralKeys,
} from "@mcp-pipeline/bundler";
import {
  createQueueWhenReady,
  EmulatorStack,
  emulatorClientOptions,
  startSqsS3,
} from "@mcp-pipeline/emulators";
import {
  kinesisFailureRecord,
  lambdaContext,
  sqsRecord,
  TEST_ACCOUNT,
  TEST_REGION,
} from "@mcp-pipeline/emulators/testing";
import { unzip, unzipTo } from "@mcp-pipeline/local-runtime";
import { listQuarantine } from "@mcp-pipeline/recovery";
import { readQuarantineRecord } from "@mcp-pipeline/recovery/quarantine";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { dlqRedriveEnvironment } from "../../../functions/dlq-redrive/test/environment.ts";
import { Stack, startedRecords } from "../../../functions/processor/test/stack.ts";
import { body, job, WorkerStack } from "../../../packages/worker/test/stack.ts";

const processorDir = join(import.meta.dirname, "../../../functions/processor");
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "bundle-test-"));
});
afterAll(() => rm(work, { recursive: true, force: true }));

/** `contents` (an entry that re-exports modules) bundled alone, with or without plugins, and imported. */
async function bundledExports(
  contents: string,
  name: string,
  plugins?: Parameters<typeof build>[0]["plugins"],
): Promise<Record<string, unknown>> {
  const out = join(work, `${name}-${plugins?.length ?? 0}.mjs`);
  await build({
    stdin: { contents, resolveDir: join(import.meta.dirname, "../../.."), loader: "js" },
    bundle: true,
    platform: "node",
    format: "esm",
    mainFields: ["module", "main"],
    outfile: out,
    logLevel: "error",
    ...(plugins ? { plugins } : {}),
  });
  return (await import(pathToFileURL(out).href)) as Record<string, unknown>;
}

/** What an import of a bundle's index.mjs loads (it and the chunks it imports statically), from its metafile. */
async function loadedAtImport(outDir: string): Promise<{ modules: string[]; imports: string[] }> {
  const meta = JSON.parse(await readFile(join(outDir, "meta.json"), "utf8")) as {
    outputs: Record<
      string,
      { inputs: Record<string, { bytesInOutput: number }>; imports: { path: string; kind: string }[] }
    >;
  };
  const loaded = new Set<string>();
  const visit = (path: string | undefined) => {
    const output = path === undefined ? undefined : meta.outputs[path];
    if (!path || !output || loaded.has(path)) return;
    loaded.add(path);
    for (const i of output.imports) if (i.kind === "import-statement") visit(i.path);
  };
  visit(Object.keys(meta.outputs).find((path) => path.endsWith("index.mjs")));
  const outputs = [...loaded].flatMap((path) => (meta.outputs[path] ? [meta.outputs[path]] : []));
  return {
    modules: outputs.flatMap((output) =>
      Object.entries(output.inputs).flatMap(([path, { bytesInOutput }]) => (bytesInOutput > 0 ? [path] : [])),
    ),
    imports: outputs.flatMap((output) => output.imports.map((i) => i.path)),
  };
}

describe("function artifacts", () => {
  it("write an SDK client's schema keys as the strings they name", async () => {
    const file = join(
      import.meta.dirname,
      "../../../node_modules/@aws-sdk/client-s3/dist-es/schemas/schemas_0.js",
    );
    const source = await readFile(file, "utf8");
    const rewritten = withLiteralKeys(source);
    expect(source).toContain("{ [_hH]: _xaa }");
    expect(rewritten).toContain('{ "httpHeader": _xaa }');
    expect(rewritten).not.toMatch(/\[_\w+\]:/);
  });

  it.each(["client-s3", "client-dynamodb", "client-kinesis", "client-sqs"])(
    "keep every schema of @aws-sdk/%s as it is when its keys are written as strings",
    async (client) => {
      const file = join(
        import.meta.dirname,
        `../../../node_modules/@aws-sdk/${client}/dist-es/schemas/schemas_0.js`,
      );
      // Every schema the client exports, bundled as written and as rewritten: the same values.
      const schemas = async (plugins?: Parameters<typeof build>[0]["plugins"]) =>
        JSON.stringify(
          await bundledExports(`export * from ${JSON.stringify(file)};`, `${client}-schemas`, plugins),
          (_key, value: unknown) => (typeof value === "function" ? value.toString() : value),
        );
      const [asWritten, withLiterals] = await Promise.all([schemas(), schemas([directModules])]);
      expect(Object.keys(JSON.parse(asWritten)).length).toBeGreaterThan(10);
      expect(withLiterals).toBe(asWritten);
    },
  );

  it.each([
    "@smithy/core/serde",
    "@smithy/core/retry",
    "@smithy/core/endpoints",
    "@smithy/core/protocols",
    "@aws-sdk/core/httpAuthSchemes",
    "@aws-sdk/core/protocols",
    "@smithy/node-http-handler",
  ])("keep every export of the SDK's barrel %s when modules import past it", async (barrel) => {
    // The barrel bundled as written and as directModules rewrites it (split in two where it has code of its
    // own, its re-exports naming the defining modules): the same names, each of the same kind.
    const exports = async (plugins?: Parameters<typeof build>[0]["plugins"]) =>
      Object.entries(
        await bundledExports(
          `export * from ${JSON.stringify(barrel)};`,
          barrel.replaceAll("/", "_"),
          plugins,
        ),
      )
        .map(([name, value]) => `${name}: ${typeof value}`)
        .sort();
    const [asWritten, direct] = await Promise.all([exports(), exports([directModules])]);
    expect(asWritten.length).toBeGreaterThan(3);
    expect(direct).toEqual(asWritten);
  });

  it("load at a worker's import neither HTTP/2, the event-stream codec, S3's XML protocol nor its checksum streams", async () => {
    // What the workers' hot path never runs (event streams) or runs only on a rare path (S3 for a large
    // result, SQS for a poison message): reached through the SDK's barrels, it was in chunks that index.mjs
    // imports (docs/benchmarks/cold-start.md).
    await bundleFunction(join(import.meta.dirname, "../../../functions/tool-worker"), join(work, "imports"));
    const { modules, imports } = await loadedAtImport(join(work, "imports"));
    expect(modules.some((path) => path.includes("/@aws-sdk/client-kinesis/"))).toBe(true);
    expect(
      modules.filter((path) =>
        /protocols\/xml\/|xml-builder\/|eventstream-codec\/|node-http2|util-stream\/checksum\/|client-s3\/|client-sqs\//.test(
          path,
        ),
      ),
    ).toEqual([]);
    expect(imports).not.toContain("node:http2");
    // Nor is the event-stream codec in the zip: the HTTP protocol's dynamic import of it is the stand-in.
    const whole = JSON.parse(await readFile(join(work, "imports/meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    expect(
      Object.values(whole.outputs).flatMap((output) =>
        Object.keys(output.inputs).filter((path) => /eventstream-codec\/|node-http2/.test(path)),
      ),
    ).toEqual([]);
  });

  it.each(["processor", "tool-worker", "fifo-worker", "dlq-redrive"])(
    "load no zod at %s's import (its hot path decodes with light-schema)",
    async (name) => {
      // zod was 94 KiB of dlq-redrive's code at import once a zod-free decoder imported a constant from its
      // zod schema's file (docs/benchmarks/cold-start.md).
      await bundleFunction(
        join(import.meta.dirname, `../../../functions/${name}`),
        join(work, `no-zod-${name}`),
      );
      const { modules } = await loadedAtImport(join(work, `no-zod-${name}`));
      expect(modules.filter((path) => path.includes("/zod/"))).toEqual([]);
    },
  );

  it.each(["processor", "tool-worker", "fifo-worker", "dlq-redrive"])(
    "%s: the zip holds its own part of function-environment.json, no SDK client's whole package.json, no flexible checksums and no JavaScript hashes",
    async (name) => {
      // What the function never reads (tools/bundler/src/projected-json.ts) or never runs
      // (packages/aws/src/without-flexible-checksums.ts, without-js-hashes.ts): about 30 KiB of a worker's code.
      const out = join(work, `projected-${name}`);
      await bundleFunction(join(import.meta.dirname, `../../../functions/${name}`), out);
      const files = unzip(await readFile(join(out, `${name}.zip`)));
      const code = [...files.values()].map((file) => file.content.toString("utf8")).join("\n");
      const own = name.replaceAll("-", "_");
      const others = ["processor", "tool_worker", "fifo_worker", "dlq_redrive"].filter((fn) => fn !== own);
      expect(code).toContain(`${own}:{tuning:`);
      expect(others.filter((fn) => code.includes(`${fn}:{tuning:`))).toEqual([]);
      expect(code).not.toContain("Stop starting work when less than this much");
      expect(code).not.toContain("devDependencies");
      const meta = JSON.parse(await readFile(join(out, "meta.json"), "utf8")) as {
        outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
      };
      expect(
        Object.values(meta.outputs).flatMap((output) =>
          Object.entries(output.inputs).flatMap(([path, { bytesInOutput }]) =>
            bytesInOutput > 0 &&
            ((/checksums\/dist-es\/submodules\/(flexible-checksums|crc)\//.test(path) &&
              // The client's settings (resolveFlexibleChecksumsConfig and the variables it reads) stay the SDK's.
              !/CONFIG_OPTIONS|constants|resolveFlexibleChecksumsConfig|stringUnionSelector/.test(path)) ||
              /\/(Sha256Js|Md5Js|Sha1Js)\.js$/.test(path))
              ? [path]
              : [],
          ),
        ),
      ).toEqual([]);
    },
  );

  it("name a package bundled from two node_modules folders, which the build refuses", () => {
    // The paths of dlq-redrive's metafile when fauxqs's newer S3 client was hoisted to the root.
    const inputs = [
      "../../packages/aws/node_modules/@aws-sdk/client-s3/dist-es/S3Client.js",
      "../../packages/redrive/node_modules/@aws-sdk/client-s3/dist-es/schemas/schemas_0.js",
      "../../packages/aws/node_modules/@aws-sdk/client-s3/dist-es/schemas/schemas_0.js",
      "../../../node_modules/@smithy/core/dist-es/index.js",
      "../../packages/consumer-shell/node_modules/@aws-lambda-powertools/logger/lib/esm/Logger.js",
      "../../packages/redrive/src/index.ts",
    ];
    expect(duplicatedPackages(inputs)).toEqual([
      "@aws-sdk/client-s3 (../../packages/aws/node_modules/, ../../packages/redrive/node_modules/)",
    ]);
    expect(
      duplicatedPackages(inputs.filter((path) => !path.includes("packages/redrive/node_modules"))),
    ).toEqual([]);
  });

  /** A function folder of its own under the test's work folder: each file's path and content. */
  async function functionFolder(name: string, files: Record<string, string>): Promise<string> {
    const dir = join(work, name);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(dir, path, ".."), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    return dir;
  }

  it("refuse a bundle that carries zod's locales (zod imported as { z }), naming the cure", async () => {
    const dir = await functionFolder("zod-named", {
      "src/index.ts":
        'import { z } from "zod";\nexport const handler = (event: unknown) => z.string().parse(event);\n',
    });
    await symlink(join(import.meta.dirname, "../../../node_modules"), join(dir, "node_modules"));
    await expect(bundleFunction(dir, join(dir, "dist"))).rejects.toThrow(
      /^zod-named: the bundle carries code no function calls \(\d+ files, e\.g\. \S+node_modules\/zod\/v4\/locales\/\S+\.js\): import zod as a namespace \(import \* as z from "zod"\), not \{ z \}, which esbuild cannot shake$/,
    );
  });

  it("refuse a bundle that carries a package from two node_modules folders, naming both", async () => {
    const copy = "export const copy = () => import.meta.url;\n";
    const dir = await functionFolder("two-copies", {
      "src/index.ts":
        'import { copy } from "tiny";\nimport { other } from "../lib/other.js";\nexport const handler = () => [copy(), other()];\n',
      "lib/other.js": 'import { copy } from "tiny";\nexport const other = () => copy();\n',
      "node_modules/tiny/package.json": '{ "name": "tiny", "type": "module", "main": "index.js" }\n',
      "node_modules/tiny/index.js": copy,
      "lib/node_modules/tiny/package.json": '{ "name": "tiny", "type": "module", "main": "index.js" }\n',
      "lib/node_modules/tiny/index.js": copy,
    });
    await expect(bundleFunction(dir, join(dir, "dist"))).rejects.toThrow(
      "two-copies: the bundle carries two copies of tiny (node_modules/, lib/node_modules/): pin the workspaces' version in the root package.json so that npm installs one copy",
    );
  });

  it("name no folder of the machine that built them, so any checkout builds the same zips", async () => {
    // esbuild hashes a chunk's source map into its name: a path of this checkout in a rewritten module's
    // source (tools/bundler/src/direct-imports.ts) gave the same commit other chunk names, and other zips,
    // in another folder.
    const out = join(work, "paths");
    await bundleFunction(processorDir, out);
    const root = join(import.meta.dirname, "../../..");
    const files = (await readdir(out, { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
    const naming: string[] = [];
    for (const file of files) {
      const path = join(file.parentPath, file.name);
      // A map's `sources` are relative to the output folder, which is outside the repository here.
      const text = path.endsWith(".zip")
        ? [...unzip(await readFile(path)).values()]
            .map((entry) => entry.content.toString("latin1"))
            .join("\n")
        : path.endsWith(".map")
          ? JSON.stringify(JSON.parse(await readFile(path, "utf8")).sourcesContent)
          : await readFile(path, "latin1");
      if (text.includes(root)) naming.push(path.slice(out.length + 1));
    }
    expect(files.some((f) => f.name.endsWith(".map"))).toBe(true);
    expect(naming).toEqual([]);
  });

  it("are byte-identical when built twice from the same sources", async () => {
    await bundleFunction(processorDir, join(work, "a"));
    await bundleFunction(processorDir, join(work, "b"));
    const [a, b] = await Promise.all([
      readFile(join(work, "a/processor.zip")),
      readFile(join(work, "b/processor.zip")),
    ]);
    expect(a.equals(b)).toBe(true);
    expect(await base64Sha256(join(work, "a/processor.zip"))).toBe(
      await base64Sha256(join(work, "b/processor.zip")),
    );
    const entries = unzip(a);
    // index.mjs and the chunks it imports (code splitting), by name, and nothing else.
    const names = [...entries.keys()];
    expect(names).toContain("index.mjs");
    expect(names.filter((n) => n !== "index.mjs").every((n) => /^chunk-[A-Z0-9]{8}\.mjs$/.test(n))).toBe(
      true,
    );
    expect(names).toEqual([...names].sort());
    // The rare path (the quarantine's S3 client) is in a chunk of its own, not in what an import loads.
    expect(names.length).toBeGreaterThan(1);
    // What a function never runs is not in the zip: the SDK's default credential chain beyond Lambda's two
    // sources (and the STS/SSO clients it needs), and the browser's user-agent parser.
    const meta = JSON.parse(await readFile(join(work, "a/meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const bundled = Object.values(meta.outputs).flatMap((output) => Object.keys(output.inputs));
    expect(
      bundled.filter((path) =>
        /credential-provider-(node|ini|sso|process|web-identity|login)\/|nested-clients\/|bowser\//.test(
          path,
        ),
      ),
    ).toEqual([]);
    expect(bundled.some((path) => join(processorDir, path) === LAMBDA_CREDENTIALS)).toBe(true);
    for (const name of names) {
      // 1980-01-01 00:00 in DOS fields, regular file rw-r--r--.
      expect(entries.get(name)).toMatchObject({
        mode: 0o100644,
        dosTime: 0,
        dosDate: (0 << 9) | (1 << 5) | 1,
      });
    }
  });

  it("run on the test runtime's Node 22 and process a batch against the emulators, quarantining a bad record through a chunk", async () => {
    expect(process.versions.node.split(".")[0]).toBe("22");
    await bundleFunction(processorDir, join(work, "run"));
    const file = await unzipTo(await readFile(join(work, "run/processor.zip")), join(work, "run/code"));
    const stack = await Stack.start();
    try {
      await stack.reset();
      vi.stubEnv("AWS_REGION", "us-east-1");
      vi.stubEnv("AWS_ACCESS_KEY_ID", "test");
      vi.stubEnv("AWS_SECRET_ACCESS_KEY", "test");
      vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", stack.endpoints.dynamo);
      vi.stubEnv("AWS_ENDPOINT_URL_S3", stack.endpoints.s3);
      vi.stubEnv("TOOL_CALLS_TABLE", stack.tables.toolCalls);
      vi.stubEnv("DEDUPE_TABLE", stack.tables.dedupe);
      vi.stubEnv("QUARANTINE_BUCKET", stack.tables.bucket);
      const bundle = (await import(pathToFileURL(file).href)) as {
        handler: (event: unknown, context: unknown) => Promise<unknown>;
      };
      const { records } = startedRecords(12, 3);
      // A record that is not JSON: quarantined through the S3 client and writer the chunks hold.
      const bad = {
        ...records[0],
        kinesis: { ...records[0]?.kinesis, data: Buffer.from("{oops").toString("base64") },
      };
      const response = await bundle.handler(
        { Records: [...records, bad] },
        lambdaContext({ timeoutMs: 30_000 }),
      );
      expect(response).toEqual({ batchItemFailures: [] });
      expect((await stack.calls()).size).toBe(12);
      expect(await stack.quarantined()).toHaveLength(1);
    } finally {
      vi.unstubAllEnvs();
      await stack.stop();
    }
  });

  it("processor: the bundle recognises a redelivered batch by the SDK's ConditionalCheckFailedException (one class, whatever module imports it)", async () => {
    // The idempotency and tool-call stores tell a duplicate from a failure with `instanceof
    // ConditionalCheckFailedException`: a second copy of the class in the bundle (a module duplicated by the
    // import rewrite or a barrel's split) would make every redelivered record a transient failure, retried
    // until it expires (docs/aws-semantics.md §1.3: a Kinesis batch is retried after a failed invocation).
    await bundleFunction(processorDir, join(work, "replay"));
    const file = await unzipTo(await readFile(join(work, "replay/processor.zip")), join(work, "replay/code"));
    const stack = await Stack.start();
    try {
      await stack.reset();
      for (const [k, v] of Object.entries({
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "test",
        AWS_SECRET_ACCESS_KEY: "test",
        AWS_ENDPOINT_URL_DYNAMODB: stack.endpoints.dynamo,
        AWS_ENDPOINT_URL_S3: stack.endpoints.s3,
        TOOL_CALLS_TABLE: stack.tables.toolCalls,
        DEDUPE_TABLE: stack.tables.dedupe,
        QUARANTINE_BUCKET: stack.tables.bucket,
        POWERTOOLS_LOG_LEVEL: "CRITICAL",
      }))
        vi.stubEnv(k, v);
      const bundle = (await import(pathToFileURL(file).href)) as {
        handler: (event: unknown, context: unknown) => Promise<unknown>;
      };
      const { records } = startedRecords(6, 2);
      const first = await bundle.handler({ Records: records }, lambdaContext({ timeoutMs: 30_000 }));
      const before = await stack.calls();
      const again = await bundle.handler({ Records: records }, lambdaContext({ timeoutMs: 30_000 }));
      expect([first, again]).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
      expect(await stack.calls()).toEqual(before);
      expect(before.size).toBe(6);
      expect(await stack.quarantined()).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
      await stack.stop();
    }
  });

  it.each(["tool-worker", "fifo-worker"])(
    "%s: the bundle runs a job once when it is delivered again, and dead-letters a poison message",
    async (name) => {
      const dir = join(import.meta.dirname, "../../../functions", name);
      await bundleFunction(dir, join(work, name));
      const file = await unzipTo(await readFile(join(work, name, `${name}.zip`)), join(work, name, "code"));
      const stack = await WorkerStack.start();
      try {
        await stack.reset();
        const queue = name === "fifo-worker" ? stack.fifo : stack.standard;
        const env = {
          ...stack.functionEnvironment(queue.dlqUrl),
          POWERTOOLS_LOG_LEVEL: "CRITICAL",
          RESULT_INLINE_MAX_BYTES: "4096",
        };
        for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
        const bundle = (await import(pathToFileURL(file).href)) as {
          handler: (event: unknown, context: unknown) => Promise<unknown>;
        };
        const stats = job("text.stats", { text: "bundled and run" });
        // A result over the inline limit: stored through the S3 client the bundle loads on first use.
        const big = job("load.latency", { latencyMs: 0, resultBytes: 10_000 });
        await stack.send(queue, [
          { ...body(stats), group: "g1" },
          { body: "{]", group: "g2" },
          { ...body(big), group: "g3" },
        ]);
        const records = await stack.receive(queue);
        const response = await bundle.handler({ Records: records }, lambdaContext({ timeoutMs: 30_000 }));
        expect(response).toEqual({ batchItemFailures: [] });
        expect((await stack.call(stats.callId))?.status).toBe("completed");
        expect((await stack.call(big.callId))?.result?.location).toMatchObject({ kind: "s3" });
        expect((await stack.drain(queue.dlqUrl)).map((m) => m.body)).toEqual(["{]"]);
        // Delivered again (a visibility timeout ran out, docs/aws-semantics.md §2.1): the stores tell the
        // finished job by ConditionalCheckFailedException, one class in the bundle, and it does not run twice.
        const statsRecord = records.find((r) => r.body === body(stats).body);
        const done = await stack.call(stats.callId);
        const again = await bundle.handler({ Records: [statsRecord] }, lambdaContext({ timeoutMs: 30_000 }));
        expect(again).toEqual({ batchItemFailures: [] });
        expect(await stack.call(stats.callId)).toEqual(done);
      } finally {
        vi.unstubAllEnvs();
        await stack.stop();
      }
    },
  );

  it("dlq-redrive: the bundle re-reads an on-failure record's range from the stream into the quarantine, through its Kinesis and S3 clients", async () => {
    // The path every failure record takes (docs/aws-semantics.md §1.6): GetShardIterator and GetRecords on
    // the bundled Kinesis client, whose HTTP/2 handler and event-stream marshaller the bundle replaces
    // (packages/aws/src/without-event-streams.ts), then the quarantine's PUT.
    const dir = join(import.meta.dirname, "../../../functions/dlq-redrive");
    await bundleFunction(dir, join(work, "dlq-redrive-range"));
    const file = await unzipTo(
      await readFile(join(work, "dlq-redrive-range/dlq-redrive.zip")),
      join(work, "dlq-redrive-range/code"),
    );
    const stack = await EmulatorStack.start({ sqsS3: true, kinesis: true });
    try {
      await stack.createStream("events");
      await stack.createBucket("bundle-range-quarantine");
      const { url: dlqUrl } = await stack.createQueue({ name: "bundle-range-dlq" });
      const kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
      const data = new TextEncoder().encode('{"oops"');
      const { SequenceNumber = "", ShardId = "" } = await kinesis.send(
        new PutRecordCommand({ StreamName: "events", PartitionKey: "session-1", Data: data }),
      );
      kinesis.destroy();
      const env = {
        ...dlqRedriveEnvironment(stack.sqsS3.endpoint, "bundle-range-quarantine", dlqUrl),
        AWS_ENDPOINT_URL_KINESIS: stack.kinesis.endpoint,
        POWERTOOLS_LOG_LEVEL: "CRITICAL",
      };
      for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
      const bundle = (await import(pathToFileURL(file).href)) as {
        handler: (event: unknown, context: unknown) => Promise<unknown>;
      };
      const failure = kinesisFailureRecord({
        streamArn: `arn:aws:kinesis:${TEST_REGION}:${TEST_ACCOUNT}:stream/events`,
        shardId: ShardId,
        start: SequenceNumber,
      });
      const response = await bundle.handler(
        { Records: [sqsRecord({ messageId: "failure-1", body: JSON.stringify(failure) })] },
        lambdaContext({ functionName: "dlq-redrive" }),
      );
      expect(response).toEqual({ batchItemFailures: [] });
      const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
      const entries = await listQuarantine(s3, "bundle-range-quarantine");
      expect(entries.map((e) => e.key)).toEqual([
        expect.stringMatching(new RegExp(`/${SequenceNumber}\\.json$`)),
      ]);
      const [entry] = entries;
      const record = await readQuarantineRecord(s3, "bundle-range-quarantine", entry?.key ?? "");
      expect(Buffer.from(record.data, "base64").equals(Buffer.from(data))).toBe(true);
      // A manual replay (a dry run) through the replay chunk, which the import does not load: it finds the record.
      const replay = await bundle.handler(
        { action: "replay" },
        lambdaContext({ functionName: "dlq-redrive" }),
      );
      expect(replay).toMatchObject({ matched: 1, replayed: 0, dryRun: true, unreadable: [] });
      s3.destroy();
    } finally {
      vi.unstubAllEnvs();
      await stack.stop();
    }
  });

  it("dlq-redrive: the bundle keeps a message that is not an on-failure record in the DLQ, through its SQS chunk", async () => {
    const dir = join(import.meta.dirname, "../../../functions/dlq-redrive");
    await bundleFunction(dir, join(work, "dlq-redrive"));
    const file = await unzipTo(
      await readFile(join(work, "dlq-redrive/dlq-redrive.zip")),
      join(work, "dlq-redrive/code"),
    );
    // The SQS client is in chunks of its own, which an import does not load (docs/benchmarks/cold-start.md).
    const { modules } = await loadedAtImport(join(work, "dlq-redrive"));
    expect(modules.filter((path) => path.includes("/@aws-sdk/client-sqs/"))).toEqual([]);
    // Nor is the quarantine replay, which only a manual invocation runs (functions/dlq-redrive/src/replay.ts).
    expect(modules.filter((path) => /\/(replay-quarantine|replay)\.ts$/.test(path))).toEqual([]);
    const sqsS3 = await startSqsS3();
    try {
      const sqs = sqsClient(emulatorClientOptions(sqsS3));
      const { url: dlqUrl } = await createQueueWhenReady(sqs, { QueueName: "bundle-failures-dlq" });
      const env = {
        ...dlqRedriveEnvironment(sqsS3.endpoint, "bundle-quarantine", dlqUrl),
        POWERTOOLS_LOG_LEVEL: "CRITICAL",
      };
      for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
      const bundle = (await import(pathToFileURL(file).href)) as {
        handler: (event: unknown, context: unknown) => Promise<unknown>;
      };
      const stray = sqsRecord({ messageId: "stray-1", body: "not a failure record" });
      const response = await bundle.handler(
        { Records: [stray] },
        lambdaContext({ functionName: "dlq-redrive" }),
      );
      expect(response).toEqual({ batchItemFailures: [] });
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      expect(Messages.map((m) => m.Body)).toEqual(["not a failure record"]);
    } finally {
      vi.unstubAllEnvs();
      await sqsS3.stop();
    }
  });
});
