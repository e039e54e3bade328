import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { threadExecArgv } from "@mcp-pipeline/emulators";

export interface FunctionDefinition {
  readonly name: string;
  /** The bundle to run: `index.mjs` from the function's zip (or any ES module exporting the handler). */
  readonly codeFile: string;
  readonly handlerExport?: string;
  readonly timeoutMs: number;
  /** Not enforced (memory is not simulated); reported to the function and beside each invocation. */
  readonly memoryMb: number;
  /** The function's own environment, on top of what the Lambda runtime sets. */
  readonly environment: Readonly<Record<string, string>>;
  readonly region?: string;
}

/** What Lambda's Invoke would say: a payload, or a function error (timeouts included). */
export type InvokeResult =
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
    };

export type LogSink = (functionName: string, line: string) => void;

interface Pending {
  readonly resolve: (result: InvokeResult) => void;
}

/** One execution environment: a worker thread with its own process.env, one invocation at a time. */
class Sandbox {
  readonly worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  dead = false;
  /** Resolves when the code has loaded (Lambda's init phase); rejects with the init error. */
  readonly ready: Promise<void>;
  #settleReady: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(definition: FunctionDefinition, env: Record<string, string>, log: LogSink) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.#settleReady = { resolve, reject };
    });
    // Observed so that a sandbox that never gets invoked cannot cause an unhandled rejection.
    this.ready.catch(() => {});
    this.worker = new Worker(new URL("./sandbox-worker.mjs", import.meta.url), {
      env,
      // A Lambda runtime runs the bundle with no TypeScript loader: the host's loaders stay in the host.
      execArgv: threadExecArgv(),
      stdout: true,
      stderr: true,
      workerData: {
        codeFile: definition.codeFile,
        handlerExport: definition.handlerExport ?? "handler",
        functionName: definition.name,
        memoryMb: definition.memoryMb,
        functionArn: env.LOCAL_FUNCTION_ARN,
      },
    });
    for (const stream of [this.worker.stdout, this.worker.stderr]) {
      createInterface({ input: stream }).on("line", (line) => log(definition.name, line));
    }
    this.worker.on(
      "message",
      (message: { id: number; ok: boolean; ready?: boolean } & Record<string, unknown>) => {
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
        pending.resolve(
          message.ok
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
              },
        );
      },
    );
    const fail = (reason: string) => {
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
          requestId: "",
        });
      }
    };
    this.worker.on("error", (error) => fail(`sandbox crashed: ${error.message}`));
    this.worker.on("exit", (code) => fail(`sandbox exited with code ${code}`));
  }

  run(eventJson: string, deadline: number): Promise<InvokeResult> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, { resolve });
      this.worker.postMessage({ id, eventJson, deadline });
    });
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
    const region = definition.region ?? baseEnv.AWS_REGION ?? "us-east-1";
    this.arn = `arn:aws:lambda:${region}:000000000000:function:${definition.name}`;
    this.#log = log;
    this.#env = {
      ...baseEnv,
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
      AWS_LAMBDA_FUNCTION_NAME: definition.name,
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(definition.memoryMb),
      AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x",
      LOCAL_FUNCTION_ARN: this.arn,
      ...definition.environment,
    };
  }

  /** Invocations called and not yet answered (starting a sandbox, running, or timing out). */
  get inFlight(): number {
    return this.#inFlight;
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
    let sandbox = this.#idle.pop();
    if (!sandbox || sandbox.dead) {
      sandbox = new Sandbox(this.definition, this.#env, this.#log);
      this.#all.add(sandbox);
      this.stats.coldStarts += 1;
    }
    this.stats.invocations += 1;
    try {
      await sandbox.ready;
    } catch (error) {
      // The code could not load: every invocation fails with the init error, as Lambda reports it.
      this.stats.errors += 1;
      sandbox.dead = true;
      return {
        kind: "function-error",
        errorType: "Runtime.ImportModuleError",
        errorMessage: (error as Error).message,
        timedOut: false,
        durationMs: 0,
        requestId: "",
      };
    }
    this.#active += 1;
    this.stats.maxConcurrency = Math.max(this.stats.maxConcurrency, this.#active);
    const started = Date.now();
    const deadline = started + this.definition.timeoutMs;
    // Events cross to the sandbox as JSON text, as Lambda delivers them; the sandbox parses it (a string
    // crosses threads without the structured clone an object needs).
    const payload = JSON.stringify(event) ?? "null";
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<InvokeResult>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            kind: "function-error",
            errorType: "Sandbox.Timedout",
            errorMessage: `Task timed out after ${(this.definition.timeoutMs / 1000).toFixed(2)} seconds`,
            timedOut: true,
            durationMs: Date.now() - started,
            requestId: "",
          }),
        this.definition.timeoutMs,
      );
    });
    const result = await Promise.race([sandbox.run(payload, deadline), timedOut]);
    clearTimeout(timer);
    this.#active -= 1;
    if (result.kind === "function-error") {
      this.stats.errors += 1;
      if (result.timedOut) {
        this.stats.timeouts += 1;
        // The overrunning code may still be running: the sandbox is destroyed, not reused.
        this.#all.delete(sandbox);
        void sandbox.worker.terminate();
        return result;
      }
    } else {
      this.stats.maxMemoryUsedMb = Math.max(this.stats.maxMemoryUsedMb, result.maxMemoryUsedMb);
    }
    if (!sandbox.dead && !this.#stopped) this.#idle.push(sandbox);
    return result;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#idle.length = 0;
    await Promise.all([...this.#all].map((s) => s.worker.terminate()));
    this.#all.clear();
  }
}
