import { randomBytes, randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { threadExecArgv } from "@mcp-pipeline/emulators";

/**
 * The function's code: as Lambda runs a deployment package (the unpacked zip and the handler string of
 * its configuration, `index.handler`, resolved as the Node.js runtime resolves it), or a module file and
 * the name of its export (tests that run a script, not a package).
 */
export type FunctionCode =
  | {
      /** The unpacked deployment package (LAMBDA_TASK_ROOT). */
      readonly taskRoot: string;
      /** The function's handler setting, `<module path>.<export path>`: dist/manifest.json's `handler`. */
      readonly handler: string;
      /** The function's runtime setting (`nodejs22.x`): dist/manifest.json's `runtime`. */
      readonly runtime: string;
    }
  | {
      /** An ES module exporting the handler. */
      readonly codeFile: string;
      readonly handlerExport?: string;
    };

/** The function's logging configuration (Terraform's `logging_config`, §9.4). */
export interface FunctionLogging {
  /** JSON or Text: how the runtime writes the console's lines (AWS_LAMBDA_LOG_FORMAT). */
  readonly format: "JSON" | "Text";
  /** The application log level (AWS_LAMBDA_LOG_LEVEL); JSON format only. */
  readonly applicationLogLevel?: string;
}

export type FunctionDefinition = FunctionCode & {
  readonly name: string;
  readonly timeoutMs: number;
  /** Not enforced (memory is not simulated); reported to the function and beside each invocation. */
  readonly memoryMb: number;
  /** The function's own environment, on top of what the Lambda runtime sets; no reserved variable. */
  readonly environment: Readonly<Record<string, string>>;
  readonly region?: string;
  /** Absent: Lambda's default, the Text format without level filtering. */
  readonly logging?: FunctionLogging;
  /** Active tracing: each invocation gets its own _X_AMZN_TRACE_ID (§9.4). */
  readonly tracing?: boolean;
  /**
   * Where the sandboxes keep the code V8 compiled for the function's modules, so that a cold start after
   * the first compiles nothing again (outside the task root: the function never sees it). Absent: none.
   */
  readonly compileCacheDir?: string;
};

/**
 * The variables Lambda reserves: a function's configuration may not set them (§9.4). The runtime sets
 * them (those that apply here) in every sandbox.
 */
export const RESERVED_VARIABLES: ReadonlySet<string> = new Set([
  "_HANDLER",
  "_X_AMZN_TRACE_ID",
  "AWS_DEFAULT_REGION",
  "AWS_REGION",
  "AWS_EXECUTION_ENV",
  "AWS_LAMBDA_FUNCTION_NAME",
  "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
  "AWS_LAMBDA_FUNCTION_VERSION",
  "AWS_LAMBDA_INITIALIZATION_TYPE",
  "AWS_LAMBDA_LOG_GROUP_NAME",
  "AWS_LAMBDA_LOG_STREAM_NAME",
  "AWS_ACCESS_KEY",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_LAMBDA_RUNTIME_API",
  "LAMBDA_TASK_ROOT",
  "LAMBDA_RUNTIME_DIR",
]);

/**
 * Refuses a function configuration's environment that sets a variable Lambda reserves, as Lambda refuses
 * it (§9.4 item 2): for the environments a deployment would configure (terraform.tfvars.json's).
 */
export function assertNoReservedVariables(
  functionName: string,
  environment: Readonly<Record<string, string>>,
) {
  const reserved = Object.keys(environment).filter((name) => RESERVED_VARIABLES.has(name));
  if (reserved.length > 0) throw new ReservedVariableError(functionName, reserved);
}

/** A function's configuration set a variable Lambda reserves: Lambda refuses it, so does the local runtime. */
export class ReservedVariableError extends Error {
  readonly functionName: string;
  readonly variables: readonly string[];
  constructor(functionName: string, variables: readonly string[]) {
    super(
      `function ${functionName}: ${variables.join(", ")} ${variables.length === 1 ? "is" : "are"} reserved by Lambda and cannot be set in its environment (§9.4)`,
    );
    this.name = "ReservedVariableError";
    this.functionName = functionName;
    this.variables = variables;
  }
}

const SANDBOX = new URL("./sandbox-worker.mjs", import.meta.url);

/** `2026/12/03/[$LATEST]<32 hex>`: each execution environment writes its own log stream. */
function logStreamName(): string {
  const day = new Date().toISOString().slice(0, 10).replaceAll("-", "/");
  return `${day}/[$LATEST]${randomBytes(16).toString("hex")}`;
}

/**
 * One HTTP request the function's code sent, as its sandbox saw it leave (sandbox-worker.mjs observes
 * fetch and node:http passively; the code is not asked). Lambda reports nothing like it: it is the local
 * platform's record, for a harness that must know which invocation sent a request its downstream received.
 */
export interface SentRequest {
  /**
   * The invocation that started it (in whose async context it was sent, sandbox-worker.mjs): its code, or
   * code it left running. Handed over with that invocation only if sent before it ended; one sent later is
   * counted in the sandbox's sentOutside, never given to the invocation running then. Undefined for one
   * started by the init phase.
   */
  readonly requestId: string | undefined;
  /**
   * When it was sent (the sandbox's clock, ms since the epoch): fetch's headers written to the socket; a
   * node:http request's creation, no later than its head left (sandbox-worker.mjs).
   */
  readonly at: number;
  readonly via: "fetch" | "node:http";
  readonly method: string;
  /** `http://127.0.0.1:4566`. */
  readonly origin: string;
  /** The path and query string. */
  readonly path: string;
  /** Its Idempotency-Key header, if it had one. */
  readonly idempotencyKey: string | undefined;
}

/**
 * What Lambda's Invoke would say: a payload, or a function error (timeouts included), with the requests
 * the invocation sent (absent where no sandbox ran it: an injected fault, a sandbox that could not load).
 */
export type InvokeResult = (
  | {
      readonly kind: "ok";
      /** The handler's result as JSON text, as Lambda returns it. */
      readonly payload: string;
      readonly durationMs: number;
      readonly maxMemoryUsedMb: number;
      readonly requestId: string;
    }
  | {
      readonly kind: "function-error";
      readonly errorType: string;
      readonly errorMessage: string;
      readonly timedOut: boolean;
      readonly durationMs: number;
      readonly requestId: string;
    }
) & { readonly requests?: readonly SentRequest[] };

export type LogSink = (functionName: string, line: string) => void;

interface Pending {
  readonly resolve: (result: InvokeResult) => void;
  readonly requestId: string;
}

/**
 * What a sandbox thread posts: its init's outcome (`ready`), a request its code sent (`sent`), or an
 * invocation's result by its id.
 */
type SandboxMessage = { id: number; ok: boolean; ready?: boolean; sent?: SentRequest } & Record<
  string,
  unknown
>;

/** The thread that runs the function's code, with its environment and what the runtime tells the code. */
function sandboxWorker(definition: FunctionDefinition, env: Record<string, string>, arn: string): Worker {
  return new Worker(SANDBOX, {
    env: { ...env, AWS_LAMBDA_LOG_STREAM_NAME: logStreamName() },
    // A Lambda runtime runs the bundle with no TypeScript loader: the host's loaders stay in the host.
    execArgv: threadExecArgv(),
    stdout: true,
    stderr: true,
    workerData: {
      code:
        "handler" in definition
          ? { taskRoot: definition.taskRoot, handler: definition.handler }
          : { codeFile: definition.codeFile, handlerExport: definition.handlerExport ?? "handler" },
      functionName: definition.name,
      memoryMb: definition.memoryMb,
      functionArn: arn,
      tracing: definition.tracing ?? false,
      compileCache: definition.compileCacheDir,
    },
  });
}

/** An invocation's answer from its sandbox as Lambda's Invoke would say it. */
function invokeResultOf(message: SandboxMessage): InvokeResult {
  return message.ok
    ? {
        kind: "ok",
        payload: message.payload as string,
        durationMs: message.durationMs as number,
        maxMemoryUsedMb: Math.ceil(message.heapUsedMb as number),
        requestId: message.requestId as string,
      }
    : {
        kind: "function-error",
        errorType: message.errorType as string,
        errorMessage: message.errorMessage as string,
        timedOut: false,
        durationMs: message.durationMs as number,
        requestId: message.requestId as string,
      };
}

/** One execution environment: a worker thread with its own process.env, one invocation at a time. */
class Sandbox {
  readonly worker: Worker;
  readonly #pending = new Map<number, Pending>();
  /** The requests sent during each invocation of this sandbox not yet handed over, by request id. */
  readonly #sent = new Map<string, SentRequest[]>();
  /**
   * Requests sent after their invocation was handed over (code it left running) or started by the init
   * phase: counted, owned by none.
   */
  sentOutside = 0;
  #next = 0;
  dead = false;
  /** Why the thread crashed (its 'error'), reported when it has exited. */
  #crash: string | undefined;
  /** Resolves when the code has loaded (Lambda's init phase); rejects with the init error. */
  readonly ready: Promise<void>;
  #settleReady: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(
    definition: FunctionDefinition,
    env: Record<string, string>,
    log: LogSink,
    arn: string,
    onExit: () => void,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.#settleReady = { resolve, reject };
    });
    // Observed so that a sandbox that never gets invoked cannot cause an unhandled rejection.
    this.ready.catch(() => {});
    this.worker = sandboxWorker(definition, env, arn);
    for (const stream of [this.worker.stdout, this.worker.stderr]) {
      createInterface({ input: stream }).on("line", (line) => log(definition.name, line));
    }
    this.worker.on("message", (message: SandboxMessage) => this.#onMessage(message));
    // A crash is answered at the thread's 'exit', which always follows its 'error', not at the 'error':
    // the 'error' comes on the thread's internal port, its records of requests on the public one, and a
    // starved host can handle the 'error' first and answer the invocation without the requests it sent.
    // Node drains both ports before it emits 'exit', so every record is in by then. Marked dead at once,
    // so that no invocation is given the crashed sandbox meanwhile.
    this.worker.on("error", (error) => {
      this.dead = true;
      this.#crash ??= `sandbox crashed: ${error.message}`;
    });
    this.worker.on("exit", (code) => {
      this.#fail(this.#crash ?? `sandbox exited with code ${code}`);
      onExit();
    });
  }

  /** The code loaded or failed to (the init phase's end), or an invocation's answer. */
  #onMessage(message: SandboxMessage): void {
    if (message.sent !== undefined) {
      const list = message.sent.requestId === undefined ? undefined : this.#sent.get(message.sent.requestId);
      if (list) list.push(message.sent);
      else this.sentOutside += 1;
      return;
    }
    if (message.ready !== undefined) {
      if (message.ready) this.#settleReady?.resolve();
      else {
        const error = new Error(String(message.errorMessage));
        error.name = String(message.errorType);
        this.#settleReady?.reject(error);
      }
      return;
    }
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    pending.resolve(invokeResultOf(message));
  }

  /** The thread crashed or exited: the init (if pending) and every invocation in it fail. */
  #fail(reason: string): void {
    this.dead = true;
    this.#settleReady?.reject(new Error(reason));
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.resolve({
        kind: "function-error",
        errorType: "Runtime.ExitError",
        errorMessage: reason,
        timedOut: false,
        durationMs: 0,
        // Named, so that the requests it sent before the thread died are handed over with it.
        requestId: pending.requestId,
      });
    }
  }

  run(eventJson: string, deadline: number, requestId: string): Promise<InvokeResult> {
    const id = this.#next++;
    this.#sent.set(requestId, []);
    return new Promise((resolve) => {
      this.#pending.set(id, { resolve, requestId });
      this.worker.postMessage({ id, eventJson, deadline, requestId });
    });
  }

  /**
   * The requests the invocation sent, taken once it is over: after its answer (posted after them), or,
   * for one stopped at its timeout, after its thread exited (Node delivers what a thread posted before its
   * 'exit'), so that none it sent is missing.
   */
  takeSent(requestId: string): SentRequest[] {
    const sent = this.#sent.get(requestId) ?? [];
    this.#sent.delete(requestId);
    return sent;
  }
}

/**
 * A Lambda function run locally. Each invocation takes an idle sandbox or starts one (a cold start);
 * concurrent invocations get separate sandboxes. The timeout is enforced: an invocation that overruns
 * is a function error ("Task timed out"), its result is ignored, and its sandbox is destroyed, as
 * Lambda does. Memory is not limited; the heap used is reported per invocation.
 */
export class LocalFunction {
  readonly definition: FunctionDefinition;
  readonly arn: string;
  readonly #env: Record<string, string>;
  readonly #log: LogSink;
  readonly #idle: Sandbox[] = [];
  readonly #all = new Set<Sandbox>();
  /** Sandbox threads started and not yet exited, a timed-out one included until its thread is gone. */
  readonly #threads = new Set<Sandbox>();
  #stopped = false;
  readonly stats = {
    invocations: 0,
    errors: 0,
    timeouts: 0,
    coldStarts: 0,
    maxMemoryUsedMb: 0,
    maxConcurrency: 0,
  };
  #active = 0;
  /** Invocations between their call and their result, cold starts included. */
  #inFlight = 0;
  #lastFinishedAt = 0;

  constructor(definition: FunctionDefinition, baseEnv: Readonly<Record<string, string>>, log: LogSink) {
    this.definition = definition;
    const region =
      definition.region ?? definition.environment.AWS_REGION ?? baseEnv.AWS_REGION ?? "us-east-1";
    this.arn = `arn:aws:lambda:${region}:000000000000:function:${definition.name}`;
    this.#log = log;
    // The runtime's variables come last: a test's environment may hold credentials and a region, but not
    // what the runtime decides (the handler, the log format...).
    this.#env = {
      ...baseEnv,
      ...definition.environment,
      ...runtimeVariables(definition, region),
    };
  }

  /** Invocations called and not yet answered (starting a sandbox, running, or timing out). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Sandbox threads alive: started and not exited. A timed-out invocation is answered only once its
   * thread has exited, so no code of it runs after its answer (docs/aws-semantics.md §9.4).
   */
  get sandboxes(): number {
    return this.#threads.size;
  }

  /** When the last invocation answered (ms since the epoch; 0 before the first). */
  get lastFinishedAt(): number {
    return this.#lastFinishedAt;
  }

  async invoke(event: unknown): Promise<InvokeResult> {
    if (this.#stopped) throw new Error(`function ${this.definition.name} is stopped`);
    this.#inFlight += 1;
    try {
      return await this.#invoke(event);
    } finally {
      this.#inFlight -= 1;
      this.#lastFinishedAt = Date.now();
    }
  }

  async #invoke(event: unknown): Promise<InvokeResult> {
    const sandbox = this.#sandbox();
    this.stats.invocations += 1;
    try {
      await sandbox.ready;
    } catch (error) {
      // The code could not load: every invocation fails with the init error, as Lambda reports it
      // (Runtime.ImportModuleError, Runtime.HandlerNotFound, or what the code threw while loading).
      this.stats.errors += 1;
      sandbox.dead = true;
      return {
        kind: "function-error",
        errorType: (error as Error).name || "Runtime.ImportModuleError",
        errorMessage: (error as Error).message,
        timedOut: false,
        durationMs: 0,
        requestId: "",
      };
    }
    this.#active += 1;
    this.stats.maxConcurrency = Math.max(this.stats.maxConcurrency, this.#active);
    const result = await this.#runWithinTimeout(sandbox, event);
    this.#active -= 1;
    if (result.kind === "function-error") {
      this.stats.errors += 1;
      if (result.timedOut) {
        this.stats.timeouts += 1;
        // The overrunning code may still be running: Lambda stops it at the timeout, so the sandbox is
        // destroyed, and the invocation is answered only once its thread has exited. Answered earlier, the
        // thread could still send a request (run a tool) after the invocation was reported ended, which
        // no Lambda does (docs/aws-semantics.md §9.4 item 6).
        this.#all.delete(sandbox);
        await sandbox.worker.terminate();
        return { ...result, requests: sandbox.takeSent(result.requestId) };
      }
    } else {
      this.stats.maxMemoryUsedMb = Math.max(this.stats.maxMemoryUsedMb, result.maxMemoryUsedMb);
    }
    if (!sandbox.dead && !this.#stopped) this.#idle.push(sandbox);
    return { ...result, requests: sandbox.takeSent(result.requestId) };
  }

  /** An idle sandbox, or a new one (a cold start) when none is idle or the idle one died. */
  #sandbox(): Sandbox {
    const idle = this.#idle.pop();
    if (idle && !idle.dead) return idle;
    const started: Sandbox = new Sandbox(this.definition, this.#env, this.#log, this.arn, () =>
      this.#threads.delete(started),
    );
    this.#threads.add(started);
    this.#all.add(started);
    this.stats.coldStarts += 1;
    return started;
  }

  /** The sandbox's answer, or a timeout (logged as Lambda logs it) if the timeout comes first. */
  async #runWithinTimeout(sandbox: Sandbox, event: unknown): Promise<InvokeResult> {
    const started = Date.now();
    const deadline = started + this.definition.timeoutMs;
    // Events cross to the sandbox as JSON text, as Lambda delivers them; the sandbox parses it (a string
    // crosses threads without the structured clone an object needs).
    const payload = JSON.stringify(event) ?? "null";
    // The service names the request, so that a timeout, which the runtime never sees, is logged with it.
    const requestId = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<InvokeResult>((resolve) => {
      timer = setTimeout(() => {
        const message = `Task timed out after ${(this.definition.timeoutMs / 1000).toFixed(2)} seconds`;
        this.#log(
          this.definition.name,
          timeoutLine(this.definition, requestId, message, Date.now() - started),
        );
        resolve({
          kind: "function-error",
          errorType: "Sandbox.Timedout",
          errorMessage: message,
          timedOut: true,
          durationMs: Date.now() - started,
          requestId,
        });
      }, this.definition.timeoutMs);
    });
    const result = await Promise.race([sandbox.run(payload, deadline, requestId), timedOut]);
    clearTimeout(timer);
    return result;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#idle.length = 0;
    await Promise.all([...this.#all].map((s) => s.worker.terminate()));
    this.#all.clear();
  }
}

/**
 * The line Lambda writes when an invocation times out (the platform's, not the function's): in the JSON
 * format the invocation's report with status "timeout", in the text format "Task timed out after N
 * seconds" after the timestamp and the request id (§9.4).
 */
export function timeoutLine(
  definition: FunctionDefinition,
  requestId: string,
  message: string,
  durationMs: number,
): string {
  const time = new Date().toISOString();
  if (definition.logging?.format !== "JSON") return `${time} ${requestId} ${message}`;
  return JSON.stringify({
    time,
    type: "platform.report",
    record: {
      requestId,
      metrics: {
        durationMs,
        billedDurationMs: Math.ceil(durationMs),
        memorySizeMB: definition.memoryMb,
      },
      status: "timeout",
      errorType: "Sandbox.Timedout",
    },
  });
}

/**
 * What Lambda's runtime sets in a function's environment, as far as it applies locally (§9.4): the
 * handler and the package's folder, the runtime's name, the function's name, version, memory and log
 * group, the initialization type, the log format and level, the time zone and locale, and X-Ray's under
 * active tracing. AWS_LAMBDA_RUNTIME_API is left out: there is no Runtime API locally, the sandbox calls
 * the handler itself. The credentials are the caller's (`baseEnv`), standing for the execution role's.
 */
export function runtimeVariables(definition: FunctionDefinition, region: string): Record<string, string> {
  const logging = definition.logging;
  return {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: definition.name,
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(definition.memoryMb),
    AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${definition.name}`,
    ...("handler" in definition
      ? {
          _HANDLER: definition.handler,
          LAMBDA_TASK_ROOT: definition.taskRoot,
          AWS_EXECUTION_ENV: `AWS_Lambda_${definition.runtime}`,
        }
      : { AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x" }),
    // The local runtime's own code stands where Lambda's runtime is.
    LAMBDA_RUNTIME_DIR: decodeURIComponent(new URL(".", SANDBOX).pathname).replace(/\/$/, ""),
    TZ: ":UTC",
    LANG: "en_US.UTF-8",
    ...(logging?.format === "JSON"
      ? {
          AWS_LAMBDA_LOG_FORMAT: "JSON",
          ...(logging.applicationLogLevel ? { AWS_LAMBDA_LOG_LEVEL: logging.applicationLogLevel } : {}),
        }
      : {}),
    ...(definition.tracing
      ? { AWS_XRAY_CONTEXT_MISSING: "LOG_ERROR", AWS_XRAY_DAEMON_ADDRESS: "169.254.79.129:2000" }
      : {}),
  };
}
