/**
 * docs/recipes/bisect-partial-split.ts, exercised as far as a machine without an AWS account can:
 *
 * - Its function and its two predictions, under the local Kinesis ESM (kinesalite, fauxqs): with each
 *   partialSplitAccounting, the run the script predicts for that reading is the run the local ESM makes,
 *   read from the queues by the script's own `observe`, and its verdict names that reading. So the local
 *   runtime and the recipe say the same thing about both readings, and a recorded AWS run is compared with
 *   what the local runtime does.
 * - The script itself against moto's server (.ci/moto.sh): every create and delete call, the dry run, the
 *   deletion of everything after a failed step and after Ctrl-C, and the refused command lines. moto keeps
 *   the mapping but cannot invoke a function without Docker, so no invocation happens there: the run ends
 *   with "nothing to judge" (exit 1). What AWS itself does has not been run (no account here).
 */
import { spawn, spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { IAMClient, ListRolesCommand } from "@aws-sdk/client-iam";
import {
  CreateStreamCommand,
  DeleteStreamCommand,
  ListStreamsCommand,
  PutRecordCommand,
} from "@aws-sdk/client-kinesis";
import {
  CreateEventSourceMappingCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  ListFunctionsCommand,
} from "@aws-sdk/client-lambda";
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import { STSClient } from "@aws-sdk/client-sts";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  AwsJsonContentType,
  DoorAction,
  EmulatorStack,
  emulatorClientOptions,
  type RunningMoto,
  startMoto,
  startRequestDoor,
} from "@mcp-pipeline/emulators";
import { KinesisEventSource, LocalFunction, PartialSplitAccounting } from "@mcp-pipeline/local-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Accounting,
  identityOf,
  namesFor,
  observe,
  outcomeOf,
  predict,
  type RecipeClients,
  runRecipe,
  verdict,
} from "../../../docs/recipes/bisect-partial-split.ts";

const root = join(import.meta.dirname, "../../..");
const SCRIPT = join(root, "docs/recipes/bisect-partial-split.ts");
const HANDLER = join(root, "docs/recipes/bisect-partial-split.handler.mjs");
const credentials = { accessKeyId: "test", secretAccessKey: "test" };

describe("the recipe's function and predictions under the local ESM", () => {
  let stack: EmulatorStack;
  beforeAll(async () => {
    stack = await EmulatorStack.start({ kinesis: true, sqsS3: true });
  });
  afterAll(() => stack?.stop());

  it.each([
    [Accounting.SplitFree, PartialSplitAccounting.SplitFree],
    [Accounting.CountsAttempt, PartialSplitAccounting.CountsAttempt],
  ])(
    "partialSplitAccounting %s: the local ESM makes the run the recipe predicts for it, and the verdict names it",
    async (accounting, option) => {
      const records = 6;
      const maxRetries = 1;
      const kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
      const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
      const stream = `recipe-${accounting}`;
      await stack.createStream(stream);
      const onFailure = await stack.createQueue({ name: `recipe-${accounting}-on-failure` });
      const attempts = await stack.createQueue({ name: `recipe-${accounting}-attempts` });
      const sequences: string[] = [];
      for (let i = 0; i < records; i++) {
        const { SequenceNumber } = await kinesis.send(
          new PutRecordCommand({
            StreamName: stream,
            PartitionKey: "probe",
            Data: new TextEncoder().encode(JSON.stringify({ probe: i })),
          }),
        );
        sequences.push(SequenceNumber ?? "");
      }
      const fn = new LocalFunction(
        {
          name: "bisect-probe",
          codeFile: HANDLER,
          timeoutMs: 60_000,
          memoryMb: 128,
          environment: {
            ATTEMPTS_QUEUE_URL: attempts.url,
            AWS_ENDPOINT_URL_SQS: stack.sqsS3.endpoint,
            AWS_ACCESS_KEY_ID: credentials.accessKeyId,
            AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
          },
        },
        { AWS_REGION: "us-east-1" },
        () => {},
      );
      const esm = new KinesisEventSource({
        kinesis,
        streamName: stream,
        stream: {
          streamArn: `arn:aws:kinesis:us-east-1:000000000000:stream/${stream}`,
          region: "us-east-1",
          roleArn: "arn:aws:iam::000000000000:role/bisect-probe",
        },
        function: fn,
        parameters: {
          batchSize: records,
          batchingWindowMs: 0,
          parallelizationFactor: 1,
          startingPosition: "TRIM_HORIZON",
          maximumRetryAttempts: maxRetries,
          maximumRecordAgeMs: -1,
          bisectBatchOnFunctionError: true,
          reportBatchItemFailures: true,
        },
        partialSplitAccounting: option,
        onFailure: { sqs, queueUrl: onFailure.url },
        pollIntervalMs: 50,
        shardRefreshMs: 100,
        retryDelayMs: () => 10,
      });
      esm.start();
      try {
        const lines: string[] = [];
        const observation = await observe(
          sqs,
          { attempts: attempts.url, onFailure: onFailure.url },
          sequences.at(-1) as string,
          { deadline: Date.now() + 100_000, signal: new AbortController().signal },
          (line) => lines.push(line),
        );
        expect(observation.complete).toBe(true);
        const outcome = outcomeOf(observation, sequences);
        expect(outcome).toEqual(predict(records, maxRetries, accounting));
        expect(verdict(outcome, records, maxRetries).matches).toBe(accounting);
        // Every invocation was printed as it came, and the on-failure record.
        expect(lines.filter((l) => l.startsWith("invocation at "))).toHaveLength(
          outcome?.invocations.length ?? -1,
        );
        expect(lines.filter((l) => l.startsWith("on-failure record: "))).toHaveLength(1);
      } finally {
        await esm.stop();
        await fn.stop();
      }
    },
  );

  it("the two readings' predictions for the default run (6 records, 1 retry) differ where AWS's answer shows", () => {
    expect(predict(6, 1, Accounting.SplitFree)).toEqual({
      invocations: [[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [2, 3, 4, 5], [3, 4, 5], [4, 5], [5], [5]],
      onFailure: { first: 5, last: 5, invokeCount: 2 },
    });
    expect(predict(6, 1, Accounting.CountsAttempt)).toEqual({
      invocations: [
        [0, 1, 2, 3, 4, 5],
        [1, 2, 3, 4, 5],
      ],
      onFailure: { first: 2, last: 5, invokeCount: 2 },
    });
  });

  it("the verdict names the reading by the invocations and the records discarded, whatever approximateInvokeCount AWS writes, and says when that count differs from the local ESM's", () => {
    // Split-free as predicted, but AWS counting every invocation of record 5 (7), not the attempts (2):
    // AWS does not document what approximateInvokeCount counts for a split batch (§1.4, §1.6).
    const free = predict(6, 1, Accounting.SplitFree);
    const counted = { ...free, onFailure: { ...free.onFailure, invokeCount: 7 } };
    const judged = verdict(counted, 6, 1);
    expect(judged.matches).toBe(Accounting.SplitFree);
    expect(judged.lines.join("\n")).toContain(
      "approximateInvokeCount 7, where the local ESM writes 2 for this reading",
    );
    // The same count as the local ESM's: nothing more to say about it.
    expect(verdict(free, 6, 1).lines.join("\n")).not.toContain("where the local ESM writes");
  });

  it("the verdict says 'neither' for a run that matches no prediction, and for several on-failure records", () => {
    const free = predict(6, 1, Accounting.SplitFree);
    const smallerFirstBatch = { ...free, invocations: [[0, 1, 2, 3], ...free.invocations.slice(1)] };
    expect(verdict(smallerFirstBatch, 6, 1).matches).toBe("neither");
    expect(verdict(undefined, 6, 1).lines[0]).toContain("not one on-failure record");
  });
});

describe("the recipe's script against moto's server", () => {
  let moto: RunningMoto;
  beforeAll(async () => {
    moto = await startMoto();
  }, 300_000);
  afterAll(() => moto?.stop());

  /** The script's environment: moto's endpoint and dummy credentials; no region or profile of the machine's. */
  const env = () => {
    const { AWS_REGION, AWS_DEFAULT_REGION, AWS_PROFILE, ...rest } = process.env;
    return {
      ...rest,
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    };
  };
  const script = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", SCRIPT, ...args], { encoding: "utf8", env: env() });
  const clientOptions = () => ({ endpoint: moto.endpoint, region: "us-east-1", credentials });

  /** Every resource moto holds whose name starts with `prefix`. */
  async function leftovers(prefix: string): Promise<string[]> {
    const o = clientOptions();
    const lambda = new LambdaClient(o);
    const [roles, functions, mappings, streams, queues] = await Promise.all([
      new IAMClient(o).send(new ListRolesCommand({})),
      lambda.send(new ListFunctionsCommand({})),
      lambda.send(new ListEventSourceMappingsCommand({})),
      kinesisClient(o).send(new ListStreamsCommand({})),
      sqsClient(o).send(new ListQueuesCommand({ QueueNamePrefix: prefix })),
    ]);
    return [
      ...(roles.Roles ?? []).map((r) => `role ${r.RoleName}`),
      ...(functions.Functions ?? []).map((f) => `function ${f.FunctionName}`),
      ...(mappings.EventSourceMappings ?? []).map((m) => `mapping of ${m.FunctionArn}`),
      ...(streams.StreamNames ?? []).map((s) => `stream ${s}`),
      ...(queues.QueueUrls ?? []).map((q) => `queue ${q}`),
    ].filter((name) => name.includes(prefix));
  }

  it("--yes: creates the role, queues, stream, function and mapping, puts the records, waits, then deletes every one (nothing to judge: exit 1)", async () => {
    const run = script(["--region", "us-east-1", "--yes", "--wait", "3", "--prefix", "t-run"]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("account 123456789012");
    expect(run.stdout).toContain("region us-east-1");
    for (const step of [
      /created IAM role arn:aws:iam::123456789012:role\/t-run-[0-9a-f]{6}-role/,
      /created SQS queue t-run-[0-9a-f]{6}-on-failure/,
      /created SQS queue t-run-[0-9a-f]{6}-attempts/,
      /put the inline policy t-run-[0-9a-f]{6}-policy/,
      /created Kinesis stream t-run-[0-9a-f]{6}-stream/,
      /created Lambda function arn:aws:lambda:us-east-1:123456789012:function:t-run-[0-9a-f]{6}-fn/,
      /put record 5: sequence number/,
      /created event source mapping [0-9a-f-]{36}/,
      /no on-failure record ending at record 5 within 3 s \(0 invocations recorded\): nothing to judge/,
      /deleted event source mapping/,
      /deleted Lambda function/,
      /deleted Kinesis stream/,
      /deleted IAM role policy/,
      /deleted SQS queue t-run-[0-9a-f]{6}-attempts/,
      /deleted SQS queue t-run-[0-9a-f]{6}-on-failure/,
      /deleted IAM role t-run/,
    ])
      expect(run.stdout).toMatch(step);
    expect(run.status).toBe(1);
    expect(await leftovers("t-run")).toEqual([]);
  });

  it("without --yes: says what it would create, where (account, region) and what each reading predicts, and creates nothing", async () => {
    const run = script(["--region", "us-east-1", "--prefix", "t-dry"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("account 123456789012 (arn:aws:sts::123456789012:");
    expect(run.stdout).toMatch(/Kinesis stream t-dry-[0-9a-f]{6}-stream \(1 provisioned shard/);
    expect(run.stdout).toContain(
      "split-free predicts:     7 invocations (0-5, 1-5, 2-5, 3-5, 4-5, 5, 5); on-failure record 5..5, approximateInvokeCount 2",
    );
    expect(run.stdout).toContain(
      "counts-attempt predicts: 2 invocations (0-5, 1-5); on-failure record 2..5, approximateInvokeCount 2",
    );
    expect(run.stdout).toContain("dry run: nothing created");
    expect(await leftovers("t-dry")).toEqual([]);
  });

  it("a step that fails (CreateEventSourceMapping refused): everything created before it is deleted, and the error is returned", async () => {
    const o = clientOptions();
    const lambda = new LambdaClient(o);
    lambda.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === CreateEventSourceMappingCommand.name) {
          // As the service refuses: an answer (its status) to the one try.
          throw Object.assign(new Error("refused by the test"), {
            name: "ServiceException",
            $metadata: { httpStatusCode: 400, attempts: 1 },
          });
        }
        return next(args);
      },
      { step: "initialize", name: "refuseMappings" },
    );
    const clients: RecipeClients = {
      sts: new STSClient(o),
      iam: new IAMClient(o),
      lambda,
      kinesis: kinesisClient(o),
      sqs: sqsClient(o),
    };
    const lines: string[] = [];
    const { result, left, error } = await runRecipe(
      clients,
      {
        region: "us-east-1",
        prefix: "t-fail",
        records: 3,
        maxRetries: 0,
        waitSeconds: 5,
        yes: true,
        names: namesFor("t-fail", "abcdef"),
        identity: await identityOf(clients.sts),
      },
      {
        say: (l) => lines.push(l),
        signal: new AbortController().signal,
        handlerCode: await readFile(HANDLER),
      },
    );
    expect((error as Error).message).toBe("refused by the test");
    expect(result).toBeUndefined();
    expect(left).toEqual([]);
    expect(lines.filter((l) => l.startsWith("deleted "))).toEqual([
      "deleted Lambda function t-fail-abcdef-fn",
      "deleted Kinesis stream t-fail-abcdef-stream",
      "deleted IAM role policy t-fail-abcdef-policy",
      "deleted SQS queue t-fail-abcdef-attempts",
      "deleted SQS queue t-fail-abcdef-on-failure",
      "deleted IAM role t-fail-abcdef-role",
    ]);
    expect(await leftovers("t-fail")).toEqual([]);
  });

  /** The recipe's run against moto with these clients, interrupted or not by `signal`. */
  async function runAgainstMoto(prefix: string, clients: RecipeClients, signal: AbortSignal) {
    const lines: string[] = [];
    const outcome = await runRecipe(
      clients,
      {
        region: "us-east-1",
        prefix,
        records: 3,
        maxRetries: 0,
        waitSeconds: 1,
        yes: true,
        names: namesFor(prefix, "abcdef"),
        identity: await identityOf(clients.sts),
      },
      { say: (l) => lines.push(l), signal, handlerCode: await readFile(HANDLER) },
    );
    return { ...outcome, lines };
  }
  const motoClients = (overrides: Partial<RecipeClients> = {}): RecipeClients => {
    const o = clientOptions();
    return {
      sts: new STSClient(o),
      iam: new IAMClient(o),
      lambda: new LambdaClient(o),
      kinesis: kinesisClient(o),
      sqs: sqsClient(o),
      ...overrides,
    };
  };

  it("Ctrl-C while a create request is in flight: the resource it created, whose answer never came, is deleted too", async () => {
    // CreateStream is applied at moto, its answer held until the client gives up (aborts on Ctrl-C).
    const door = await startRequestDoor(
      moto.endpoint,
      (target) => (target.endsWith(".CreateStream") ? DoorAction.HoldAnswer : DoorAction.Pass),
      AwsJsonContentType.V1_1,
    );
    try {
      const interrupt = new AbortController();
      const kinesis = kinesisClient({ ...clientOptions(), endpoint: door.endpoint, maxAttempts: 1 });
      const running = runAgainstMoto("t-held", motoClients({ kinesis }), interrupt.signal);
      while (door.stats.held < 1) await new Promise((r) => setTimeout(r, 20));
      expect(await leftovers("t-held")).toContain("stream t-held-abcdef-stream");

      interrupt.abort(new Error("interrupted"));
      const { left, error, lines } = await running;

      expect((error as Error).name).toBe("AbortError");
      expect(left).toEqual([]);
      expect(lines).toContain("deleted Kinesis stream t-held-abcdef-stream");
      expect(await leftovers("t-held")).toEqual([]);
    } finally {
      await door.stop();
    }
  });

  it("a create whose answer is lost after it was applied (CreateEventSourceMapping): the mapping, whose UUID never came, is deleted too", async () => {
    const lambda = new LambdaClient(clientOptions());
    lambda.middlewareStack.add(
      (next, context) => async (args) => {
        const answer = await next(args);
        if (context.commandName === CreateEventSourceMappingCommand.name) {
          throw Object.assign(new Error("socket hang up"), { name: "TimeoutError" });
        }
        return answer;
      },
      { step: "initialize", name: "loseMappingAnswer" },
    );

    const { left, error, lines } = await runAgainstMoto(
      "t-lost",
      motoClients({ lambda }),
      new AbortController().signal,
    );

    expect((error as Error).message).toBe("socket hang up");
    expect(left).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(/^deleted event source mapping/));
    expect(await leftovers("t-lost")).toEqual([]);
  });

  it("a create refused at its first answer (the name taken) registers nothing: what exists under that name is not the run's to delete", async () => {
    const names = namesFor("t-taken", "abcdef");
    const o = clientOptions();
    await kinesisClient(o).send(new CreateStreamCommand({ StreamName: names.stream, ShardCount: 1 }));

    const { left, error, lines } = await runAgainstMoto(
      "t-taken",
      motoClients(),
      new AbortController().signal,
    );

    expect((error as Error).name).toBe("ResourceInUseException");
    expect(left).toEqual([]);
    expect(lines.filter((l) => l.includes("stream"))).not.toContainEqual(expect.stringMatching(/^deleted/));
    expect(await leftovers("t-taken")).toEqual(["stream t-taken-abcdef-stream"]);
    await kinesisClient(o).send(new DeleteStreamCommand({ StreamName: names.stream }));
  });

  it("Ctrl-C while it waits: deletes everything it created and exits 130", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", SCRIPT, "--region", "us-east-1", "--yes", "--wait", "600", "--prefix", "t-int"],
      { env: env(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes("waiting up to 600 s")) resolve();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      child.once("exit", () => reject(new Error(`exited before waiting:\n${stdout}\n${stderr}`)));
    });
    expect(await leftovers("t-int")).toHaveLength(6);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain("interrupted: deleting what was created");
    expect(stdout).toMatch(/deleted IAM role t-int-[0-9a-f]{6}-role/);
    expect(await leftovers("t-int")).toEqual([]);
  });

  it.each([
    [["--region", "us-east-1", "--records", "2"], "--records must be between 3 and 100, got 2"],
    [["--region", "us-east-1", "--max-retries", "-1"], "--max-retries must be between 0 and 10, got -1"],
    [["--region", "us-east-1", "--wait", "0"], "--wait must be between 1 and 3600, got 0"],
    [
      ["--region", "us-east-1", "--prefix", "Bad_Name"],
      '--prefix must be 1 to 32 of a-z 0-9 -, got "Bad_Name"',
    ],
    [["--region", "mars-1"], '--region "mars-1" is no AWS region'],
    [[], "--region is needed"],
    [["--region", "us-east-1", "--nope"], "Unknown option '--nope'"],
    [
      ["--region", "us-east-1", "--records", "3", "--max-retries", "4"],
      "--records 3 with --max-retries 4: both readings end with the same on-failure record",
    ],
  ])("refuses %j (exit 2, usage on stderr, nothing asked of AWS)", (args, message) => {
    const run = script(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain("Usage: npx tsx docs/recipes/bisect-partial-split.ts");
    expect(run.stdout).toBe("");
  });

  it("--help prints the usage and exits 0", () => {
    const run = script(["--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("--max-retries N");
  });
});
