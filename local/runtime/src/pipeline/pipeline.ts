/**
 * The whole pipeline on one machine: embedded emulators (or any endpoints given as AWS_ENDPOINT_URL_*),
 * the environment's resources, every function bundle from dist/ in Lambda-like sandboxes, and the
 * event source mappings of local/runtime/src/esm configured from terraform.tfvars.json.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { KinesisClient } from "@aws-sdk/client-kinesis";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { ClientOptions } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  type EmbeddedEmulators,
  type InjectedFault,
  type RequestCounts,
  type RunningEmulator,
  startEmulators,
  startFaultProxy,
} from "@mcp-pipeline/emulators";
import {
  type EnvironmentSettings,
  FUNCTION_LOGGING,
  FUNCTION_TRACING_ACTIVE,
  type FunctionKey,
  type ResourceNames,
  resourceNames,
  testTools,
} from "@mcp-pipeline/settings";
import type { Invokable } from "../esm/invokable.js";
import { PartialSplitAccounting } from "../esm/kinesis/partial-split-accounting.js";
import { type KinesisEsmEvent, KinesisEventSource } from "../esm/kinesis/poller.js";
import {
  assertNoReservedVariables,
  type FunctionDefinition,
  type InvokeResult,
  LocalFunction,
} from "../esm/lambda/local-function.js";
import { type SqsEsmEvent, SqsEventSource } from "../esm/sqs/poller.js";
import { type Endpoints, endpointsFromEnvironment } from "./endpoints.js";
import {
  FUNCTION_NAMES,
  type FunctionName,
  functionEnvironment,
  SETTINGS_KEY,
} from "./function-environment.js";
import { readDistManifest, type UnpackedFunction, unpackFunction } from "./function-package.js";
import { MetricsSink } from "./metrics-sink.js";
import type { PartialSplits } from "./partial-splits.js";
import { ProcessorTraffic } from "./processor-traffic.js";
import { createLocalResources, type QueueHandle, type QueueRole } from "./resources.js";
import { scaledRetryWaits } from "./retry-waits.js";

export type { FunctionName } from "./function-environment.js";
export type { QueueHandle } from "./resources.js";
export { type Endpoints, endpointsFromEnvironment };

export interface PipelineOptions {
  readonly settings: EnvironmentSettings;
  /** Every duration setting is divided by this (function and visibility timeouts, windows, record age). */
  readonly timeScale: number;
  /** Directory holding <function>.zip (the build's dist/). */
  readonly distDir: string;
  /** Endpoints from AWS_ENDPOINT_URL_*; when absent, embedded emulators are started. */
  readonly endpoints?: Endpoints;
  readonly region?: string;
  readonly onKinesisEvent?: (event: KinesisEsmEvent) => void;
  /** Every SQS mapping's events, with the function the mapping invokes. */
  readonly onSqsEvent?: (name: FunctionName, event: SqsEsmEvent) => void;
  /** Log lines of the functions that are not metrics (errors and warnings, by default). */
  readonly onLog?: (functionName: string, line: string) => void;
  /**
   * Faults injected into the processor's DynamoDB requests (a loopback proxy between the processor and
   * DynamoDB), while `faultsActive` is true: how a scenario makes records fail until retries run out.
   */
  readonly processorDynamoDbFault?: (target: string, body: string) => InjectedFault | undefined;
  /**
   * Wraps each function's invoke as its event source mapping calls it: where a fault injector stands in
   * for the Lambda service (throttles, handler exceptions, timeouts) and where an observer sees every
   * event and result. Absent: the mappings call the functions directly.
   */
  readonly wrapInvoke?: (name: FunctionName, invoke: InvokeFunction) => InvokeFunction;
  /**
   * Variables added to a function's environment, over the settings' own: e.g. the downstream the
   * workers' `http.request` tool calls (HTTP_TOOL_BASE_URL), when the caller runs one.
   */
  readonly extraEnvironment?: Partial<Record<FunctionName, Readonly<Record<string, string>>>>;
  /**
   * With bisect on, whether a partial answer's split uses a retry (the local Kinesis mapping's
   * PartialSplitAccounting; AWS does not document it, docs/aws-semantics.md §1.4). Absent: the local ESM's
   * default, "split-free".
   */
  readonly partialSplitAccounting?: PartialSplitAccounting;
}

/** What an event source mapping calls: the function's synchronous invoke. */
export type InvokeFunction = (event: unknown) => Promise<InvokeResult>;

/** A function's invoke as its mapping calls it: through the options' wrapInvoke, when given. */
type WrapInvoke = (name: FunctionName, fn: LocalFunction) => InvokeFunction;

export class LocalPipeline {
  readonly names: ResourceNames;
  readonly metrics = new MetricsSink();
  /** The processor's DynamoDB requests (counted at its proxy) and the stream records it received. */
  readonly processorTraffic = new ProcessorTraffic();
  readonly functions = new Map<FunctionName, LocalFunction>();
  kinesisEsm: KinesisEventSource | undefined;
  readonly sqsEsms = new Map<FunctionName, SqsEventSource>();
  queues = {} as Record<QueueRole, QueueHandle>;
  endpoints: Endpoints = { dynamodb: "", kinesis: "", sqs: "", s3: "" };
  streamArn = "";
  kinesis!: KinesisClient;
  sqs!: SQSClient;
  s3!: S3Client;
  dynamodb!: DynamoDBClient;
  readonly #options: PipelineOptions;
  #emulators: EmbeddedEmulators | undefined;
  #faultProxy: (RunningEmulator & { readonly injected: () => number }) | undefined;
  /** Turn injected faults off (the downstream "recovers"), e.g. before a replay. */
  faultsActive = true;
  #codeDir: string | undefined;
  /** Removes the code copies when the process exits without stop() (a second Ctrl-C, a crash). */
  #removeCodeOnExit: (() => void) | undefined;
  #stopped = false;

  constructor(options: PipelineOptions) {
    this.#options = options;
    this.names = resourceNames(options.settings.name_prefix);
  }

  /** What the run's partial answers do to the retry quota: its accounting, or null when nothing splits. */
  get partialSplits(): PartialSplits {
    const esm = this.#options.settings.processor.esm;
    if (!esm.bisect_batch_on_function_error || !esm.report_batch_item_failures) return null;
    return this.#options.partialSplitAccounting ?? PartialSplitAccounting.SplitFree;
  }

  get region(): string {
    return this.#options.region ?? "us-east-1";
  }

  #client(endpoint: string): ClientOptions {
    return { endpoint, region: this.region, credentials: { accessKeyId: "local", secretAccessKey: "local" } };
  }

  #scale(ms: number): number {
    return Math.max(1, Math.round(ms / this.#options.timeScale));
  }

  async start(): Promise<void> {
    if (this.#options.endpoints) {
      this.endpoints = this.#options.endpoints;
    } else {
      this.#emulators = await startEmulators();
      this.endpoints = {
        dynamodb: this.#emulators.dynamodb.endpoint,
        kinesis: this.#emulators.kinesis.endpoint,
        sqs: this.#emulators.sqsS3.endpoint,
        s3: this.#emulators.sqsS3.endpoint,
      };
    }
    this.kinesis = kinesisClient(this.#client(this.endpoints.kinesis));
    this.sqs = sqsClient(this.#client(this.endpoints.sqs));
    this.s3 = s3Client(this.#client(this.endpoints.s3), {});
    this.dynamodb = new DynamoDBClient({ ...this.#client(this.endpoints.dynamodb) });
    const fault = this.#options.processorDynamoDbFault;
    // The processor reaches DynamoDB only through this loopback proxy: it injects the scenario's faults
    // (if any) and counts what the processor asks of DynamoDB, at the emulator's door.
    this.#faultProxy = await startFaultProxy(this.endpoints.dynamodb, (target, body) => {
      const injected = fault && this.faultsActive ? fault(target, body) : undefined;
      this.processorTraffic.request(target, injected !== undefined);
      return injected;
    });
    await this.#createResources();
    await this.#startFunctions();
  }

  async #createResources(): Promise<void> {
    const created = await createLocalResources(
      { kinesis: this.kinesis, sqs: this.sqs, s3: this.s3, dynamodb: this.dynamodb },
      this.#options.settings,
      this.names,
      this.#options.timeScale,
    );
    this.streamArn = created.streamArn;
    this.queues = created.queues;
  }

  async #startFunctions(): Promise<void> {
    const codeDir = await this.#codeCopiesDir();
    await this.#startSandboxes(codeDir);
    const wrap: WrapInvoke = (name, fn) => {
      const invoke: InvokeFunction = (event) => fn.invoke(event);
      return this.#options.wrapInvoke?.(name, invoke) ?? invoke;
    };
    this.#startKinesisMapping(wrap);
    await this.#startSqsMappings(wrap);
  }

  /** A temporary folder for the unpacked code, removed at stop or, failing that, when the process exits. */
  async #codeCopiesDir(): Promise<string> {
    const codeDir = await mkdtemp(join(tmpdir(), "mcp-local-"));
    this.#codeDir = codeDir;
    this.#removeCodeOnExit = () => rmSync(codeDir, { recursive: true, force: true });
    process.once("exit", this.#removeCodeOnExit);
    return codeDir;
  }

  /** Each function of dist/ unpacked and given a LocalFunction configured as Terraform would. */
  async #startSandboxes(codeDir: string): Promise<void> {
    const { distDir } = this.#options;
    // What stands for the execution role's temporary credentials, and the endpoints: the only variables a
    // function gets here that Lambda would not give it (docs/local-runtime.md).
    const baseEnv: Record<string, string> = {
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      AWS_SESSION_TOKEN: "local",
      AWS_ENDPOINT_URL_DYNAMODB: this.endpoints.dynamodb,
      AWS_ENDPOINT_URL_KINESIS: this.endpoints.kinesis,
      AWS_ENDPOINT_URL_SQS: this.endpoints.sqs,
      AWS_ENDPOINT_URL_S3: this.endpoints.s3,
    };
    const sink = (fn: string, line: string) => {
      if (!this.metrics.accept(fn, line)) this.#options.onLog?.(fn, line);
    };
    const manifest = await readDistManifest(distDir);
    for (const name of FUNCTION_NAMES) {
      const code = await unpackFunction(distDir, manifest, name, await mkdtemp(join(codeDir, `${name}-`)));
      this.functions.set(name, new LocalFunction(this.#definition(name, code, codeDir), baseEnv, sink));
    }
  }

  /** One function's definition: its settings scaled, its configured environment and the local additions. */
  #definition(name: FunctionName, code: UnpackedFunction, codeDir: string): FunctionDefinition {
    const { settings } = this.#options;
    const fn = settings[SETTINGS_KEY[name]];
    const configured = functionEnvironment(name, {
      settings,
      names: this.names,
      queues: this.queues,
      scale: (ms) => this.#scale(ms),
    });
    // What Terraform would configure: Lambda refuses a reserved variable in it, so does the local stack.
    assertNoReservedVariables(this.names.functions[SETTINGS_KEY[name]], configured);
    return {
      name: this.names.functions[SETTINGS_KEY[name]],
      ...code,
      timeoutMs: this.#scale(fn.timeout_seconds * 1000),
      memoryMb: fn.memory_mb,
      environment: {
        ...configured,
        // The processor reaches DynamoDB through the loopback proxy that counts (and faults) its requests.
        ...(name === "processor" && this.#faultProxy
          ? { AWS_ENDPOINT_URL_DYNAMODB: this.#faultProxy.endpoint }
          : {}),
        ...testToolsOn(SETTINGS_KEY[name]),
        ...this.#options.extraEnvironment?.[name],
      },
      region: this.region,
      logging: FUNCTION_LOGGING,
      tracing: FUNCTION_TRACING_ACTIVE,
      // Shared by the function's sandboxes, removed with the unpacked code at stop.
      compileCacheDir: join(codeDir, ".compile-cache", name),
    };
  }

  /** The processor's mapping on the stream, its parameters the settings' (durations scaled). */
  #startKinesisMapping(wrap: WrapInvoke): void {
    const processor = this.functions.get("processor") as LocalFunction;
    const invokeProcessor = wrap("processor", processor);
    const esm = this.#options.settings.processor.esm;
    this.kinesisEsm = new KinesisEventSource({
      kinesis: this.kinesis,
      streamName: this.names.stream,
      stream: {
        streamArn: this.streamArn,
        region: this.region,
        roleArn: `arn:aws:iam::000000000000:role/${this.names.functions.processor}`,
      },
      function: {
        arn: processor.arn,
        invoke: (event) => {
          this.processorTraffic.delivered(event);
          return invokeProcessor(event);
        },
      },
      parameters: {
        batchSize: esm.batch_size,
        batchingWindowMs: this.#scale(esm.maximum_batching_window_in_seconds * 1000),
        parallelizationFactor: esm.parallelization_factor,
        startingPosition: esm.starting_position,
        maximumRetryAttempts: esm.maximum_retry_attempts,
        maximumRecordAgeMs:
          esm.maximum_record_age_in_seconds === -1
            ? -1
            : this.#scale(esm.maximum_record_age_in_seconds * 1000),
        bisectBatchOnFunctionError: esm.bisect_batch_on_function_error,
        reportBatchItemFailures: esm.report_batch_item_failures,
      },
      // terraform/modules/pipeline: the failure queue is the destination only when the setting says so.
      ...(esm.on_failure_destination
        ? { onFailure: { sqs: this.sqs, queueUrl: this.queues.streamFailures.url } }
        : {}),
      pollIntervalMs: this.#scale(1_000),
      shardRefreshMs: 1_000,
      // The mapping's own retry waits are durations like the others (retry-waits.ts); the on-failure
      // destination's stay real: they wait out an emulator's restart, which the time scale does not shorten.
      ...scaledRetryWaits(this.#options.timeScale),
      ...(this.#options.onKinesisEvent ? { onEvent: this.#options.onKinesisEvent } : {}),
      partialSplitAccounting: this.#options.partialSplitAccounting ?? PartialSplitAccounting.SplitFree,
    });
    this.kinesisEsm.start();
  }

  /** The three SQS consumers' mappings, started one after the other. */
  async #startSqsMappings(wrap: WrapInvoke): Promise<void> {
    const { settings } = this.#options;
    for (const [name, queue, fnSettings] of [
      ["tool-worker", this.queues.toolJobs, settings.tool_worker],
      ["fifo-worker", this.queues.sessionJobs, settings.fifo_worker],
      ["dlq-redrive", this.queues.streamFailures, settings.dlq_redrive],
    ] as const) {
      const fn = this.functions.get(name) as LocalFunction;
      const invokable: Invokable & { timeoutMs: number } = {
        arn: fn.arn,
        timeoutMs: fn.definition.timeoutMs,
        invoke: wrap(name, fn),
      };
      const source = new SqsEventSource({
        sqs: this.sqs,
        queueUrl: queue.url,
        function: invokable,
        parameters: {
          batchSize: fnSettings.esm.batch_size,
          batchingWindowMs: this.#scale(fnSettings.esm.maximum_batching_window_in_seconds * 1000),
          maximumConcurrency: fnSettings.esm.maximum_concurrency,
          reportBatchItemFailures: fnSettings.esm.report_batch_item_failures,
        },
        waitTimeSeconds: 1,
        ...(this.#options.onSqsEvent
          ? { onEvent: (e: SqsEsmEvent) => this.#options.onSqsEvent?.(name, e) }
          : {}),
      });
      await source.start();
      this.sqsEsms.set(name, source);
    }
  }

  /**
   * Requests each embedded emulator answered so far, by operation; undefined when the pipeline runs on
   * endpoints it did not start (AWS_ENDPOINT_URL_*).
   */
  async emulatorRequests(): Promise<Record<keyof Endpoints, RequestCounts> | undefined> {
    const emulators = this.#emulators;
    if (!emulators) return undefined;
    const [dynamodb, kinesis, sqsS3] = await Promise.all([
      emulators.dynamodb.requests(),
      emulators.kinesis.requests(),
      emulators.sqsS3.requests(),
    ]);
    // SQS and S3 share one server: its counts are split by protocol (S3's have no X-Amz-Target).
    const of = (s3: boolean) =>
      Object.fromEntries(Object.entries(sqsS3).filter(([operation]) => operation.startsWith("S3 ") === s3));
    return { dynamodb, kinesis, sqs: of(false), s3: of(true) };
  }

  /**
   * How long each embedded emulator's thread has been busy since it started, in ms (its event loop's active
   * time); undefined when the pipeline runs on endpoints it did not start. What bench:ceiling divides by
   * the inputs: an emulator's thread is one core at most.
   */
  async emulatorBusyMs(): Promise<Record<"dynamodb" | "kinesis" | "sqsS3", number> | undefined> {
    const emulators = this.#emulators;
    if (!emulators) return undefined;
    const [dynamodb, kinesis, sqsS3] = await Promise.all([
      emulators.dynamodb.busyMs(),
      emulators.kinesis.busyMs(),
      emulators.sqsS3.busyMs(),
    ]);
    return { dynamodb, kinesis, sqsS3 };
  }

  /**
   * True when nothing is moving through the pipeline: no invocation in flight, no SQS message in a
   * mapping's hands, every failure record sent to the on-failure destination deleted by dlq-redrive's
   * mapping, and every shard polled empty after the later of `since` (the caller's last put) and the end
   * of the last invocation, so what any function put into the stream has been read and its batch is done.
   * What a caller waits on instead of a quiet period: a hand-off in progress (a record in the stream
   * not yet polled, a failure record not yet received) keeps it false.
   *
   * `deadLetteredFailureRecords`: failure records the caller took out of the failure queue's DLQ. SQS
   * moves a failure record there after dlq-redrive failed it maxReceiveCount times (§2.3), and the
   * mapping never deletes it: without this count, one such record kept the pipeline from ever being
   * drained, and a chaos run waited for its stall timeout with every input accounted for.
   */
  drained(since: number, deadLetteredFailureRecords = 0): boolean {
    const kinesis = this.kinesisEsm;
    if (!kinesis) return false;
    const functions = [...this.functions.values()];
    if (functions.some((f) => f.inFlight > 0)) return false;
    if ([...this.sqsEsms.values()].some((s) => s.inHand > 0)) return false;
    const redriven = this.sqsEsms.get("dlq-redrive")?.stats.deletedMessages ?? 0;
    if (redriven + deadLetteredFailureRecords < kinesis.stats.onFailureMessages) return false;
    return kinesis.caughtUpSince(Math.max(since, ...functions.map((f) => f.lastFinishedAt)));
  }

  /** A function's timeout as terraform.tfvars.json declares it, in seconds (before the time scale). */
  timeoutSecondsOf(name: FunctionName): number {
    return this.#options.settings[SETTINGS_KEY[name]].timeout_seconds;
  }

  /** Requests the fault proxy answered with an error. */
  get injectedFaults(): number {
    return this.#faultProxy?.injected() ?? 0;
  }

  /** Stops the mappings (in-flight invocations finish), the sandboxes and the emulators; removes the code copies. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await Promise.all([this.kinesisEsm?.stop(), ...[...this.sqsEsms.values()].map((s) => s.stop())]);
    await Promise.all([...this.functions.values()].map((f) => f.stop()));
    for (const client of [this.kinesis, this.sqs, this.s3, this.dynamodb]) client?.destroy();
    await this.#faultProxy?.stop();
    await this.#emulators?.stop();
    if (this.#codeDir) await rm(this.#codeDir, { recursive: true, force: true });
    if (this.#removeCodeOnExit) process.off("exit", this.#removeCodeOnExit);
  }

  /** The temporary folder that holds the functions' code while the pipeline runs (undefined before). */
  get codeDir(): string | undefined {
    return this.#codeDir;
  }
}

/**
 * The test tools on, for a function wired to the test_tools setting: the scenarios' jobs run load.latency,
 * a test tool, in the local runtime whatever the environment's test_tools says (docs/tool-workers.md).
 */
function testToolsOn(fn: FunctionKey): Record<string, string> {
  const variable = testTools.variable(fn);
  return variable === undefined ? {} : { [variable]: testTools.value(true) };
}
