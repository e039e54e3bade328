import { clipText, previewOf } from "@mcp-pipeline/contracts";
import {
  type ArgumentProblem,
  DeadlinePassedError,
  InvalidArgumentsError,
  InvalidResultError,
  ToolDefinitionError,
  ToolSlotWaitError,
  ToolTimeoutError,
  UnknownToolError,
} from "./errors.js";
import { toolRunIdempotencyKey } from "./idempotency-key.js";
import { Semaphore } from "./semaphore.js";
import type { RegisteredTool, ToolContext, ToolLogger } from "./tool.js";
import type { ArgumentValidator, SchemaCompiler, ValidationError } from "./validator.js";

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** Lambda's longest timeout: a tool timeout beyond it can never be reached. */
const MAX_TIMEOUT_MS = 900_000;

export interface ToolCall {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly callId: string;
  readonly sessionId: string;
  readonly attempt: number;
  /** ISO instant after which the result is useless (the job's deadline). */
  readonly deadline?: string;
}

export interface InvokeOptions {
  readonly logger: ToolLogger;
  /**
   * The most time the call may take from the moment `invoke` is called, whatever the tool's own timeout
   * (the invocation's remaining time). The wait for a concurrency slot counts against it: a queued run
   * gets only what is left, and never starts once nothing is.
   */
  readonly budgetMs?: number;
  readonly now?: () => number;
}

export interface ToolRun {
  readonly value: unknown;
  /** The result as JSON text, as it is stored. */
  readonly json: string;
  readonly durationMs: number;
}

interface Entry {
  readonly tool: RegisteredTool;
  readonly validate: ArgumentValidator;
  readonly semaphore: Semaphore;
}

/**
 * The validator's errors as problems. A path and a property name are the job's own keys, of any length:
 * they are clipped (contracts' clipText, previewOf) so that the error, the failed event and every log line
 * that repeats it stay short whatever the arguments hold.
 */
function problemsOf(errors: readonly ValidationError[] | null | undefined): ArgumentProblem[] {
  return (errors ?? []).map((e) => ({
    path: clipText(e.instancePath),
    message:
      e.keyword === "additionalProperties"
        ? `has unexpected property ${previewOf(String((e.params as { additionalProperty?: unknown }).additionalProperty))}`
        : (e.message ?? e.keyword),
  }));
}

function toJson(tool: string, value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value ?? null);
  } catch (error) {
    throw new InvalidResultError(tool, error instanceof Error ? error.message : String(error), {
      cause: error,
    });
  }
  if (json === undefined) throw new InvalidResultError(tool, `a ${typeof value} has no JSON form`);
  return json;
}

/**
 * The tools a worker can run. Every tool's validator is obtained once, at start-up, so a broken schema
 * stops the function from starting instead of failing jobs one by one; arguments are checked against it
 * (JSON Schema draft 2020-12, formats included, with Ajv) before the tool runs. `compile` gives the
 * validators: `compileWithAjv()` (`@mcp-pipeline/tools/registry/ajv`) compiles the schemas now; the
 * workers use `precompiledValidators` over code compiled at build time, which keeps Ajv out of their
 * cold start.
 */
export class ToolRegistry {
  readonly #entries = new Map<string, Entry>();

  constructor(tools: readonly RegisteredTool[], compile: SchemaCompiler) {
    for (const tool of tools) {
      if (!TOOL_NAME.test(tool.name)) {
        throw new ToolDefinitionError(tool.name, "the name must be 1-128 of [A-Za-z0-9_.-]");
      }
      if (this.#entries.has(tool.name)) throw new ToolDefinitionError(tool.name, "declared twice");
      if (!Number.isInteger(tool.timeoutMs) || tool.timeoutMs < 1 || tool.timeoutMs > MAX_TIMEOUT_MS) {
        throw new ToolDefinitionError(tool.name, `timeoutMs must be an integer in 1..${MAX_TIMEOUT_MS}`);
      }
      if (!Number.isInteger(tool.concurrency) || tool.concurrency < 1) {
        throw new ToolDefinitionError(tool.name, "concurrency must be an integer of at least 1");
      }
      if (tool.inputSchema.type !== "object") {
        throw new ToolDefinitionError(tool.name, 'an MCP inputSchema must have type "object"');
      }
      let validate: ArgumentValidator;
      try {
        validate = compile(tool);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ToolDefinitionError(tool.name, `inputSchema does not compile: ${reason}`, { cause: error });
      }
      this.#entries.set(tool.name, { tool, validate, semaphore: new Semaphore(tool.concurrency) });
    }
  }

  get names(): readonly string[] {
    return [...this.#entries.keys()];
  }

  /** The tools as an MCP `tools/list` result would describe them. */
  describe(): { name: string; description: string; inputSchema: RegisteredTool["inputSchema"] }[] {
    return [...this.#entries.values()].map(({ tool }) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }));
  }

  /** Runs in flight and waiting, per tool, for metrics and tests. */
  load(name: string): { active: number; waiting: number } | undefined {
    const entry = this.#entries.get(name);
    return entry && { active: entry.semaphore.active, waiting: entry.semaphore.waiting };
  }

  /**
   * Checks the call, waits for a slot under the tool's concurrency cap, and runs it with an abort
   * signal that fires at the tool's timeout or at the end of `budgetMs`, whichever comes first.
   * Throws UnknownToolError, InvalidArgumentsError or DeadlinePassedError (permanent) before running;
   * ToolTimeoutError (transient) on timeout; whatever the tool throws otherwise.
   */
  async invoke(call: ToolCall, options: InvokeOptions): Promise<ToolRun> {
    const now = options.now ?? Date.now;
    const entry = this.#entries.get(call.tool);
    if (!entry) throw new UnknownToolError(call.tool, this.names);
    if (!entry.validate(call.arguments)) {
      throw new InvalidArgumentsError(call.tool, problemsOf(entry.validate.errors));
    }
    const invokedAt = now();
    const budgetMs = options.budgetMs ?? Number.POSITIVE_INFINITY;
    const release = await acquireWithin(entry.semaphore, budgetMs).catch((error: unknown) => {
      if (error instanceof BudgetSpent)
        throw new ToolSlotWaitError(call.tool, Math.max(0, now() - invokedAt));
      throw error;
    });
    try {
      // Checked after the wait for a slot, which can be long under a low cap.
      if (call.deadline !== undefined && Date.parse(call.deadline) <= now()) {
        throw new DeadlinePassedError(call.deadline, now());
      }
      // The budget was given for the whole call: what the wait for a slot took is no longer there.
      const waitedMs = Math.max(0, now() - invokedAt);
      const leftMs = budgetMs - waitedMs;
      if (leftMs <= 0) throw new ToolSlotWaitError(call.tool, waitedMs);
      const timeoutMs = Math.min(entry.tool.timeoutMs, leftMs);
      const startedAt = now();
      const value = await runWithTimeout(entry.tool, call, options.logger, timeoutMs);
      return { value, json: toJson(call.tool, value), durationMs: now() - startedAt };
    } finally {
      release();
    }
  }
}

class BudgetSpent extends Error {}

/** Waits for a slot for at most `budgetMs`; a waiter whose budget ends leaves the queue (BudgetSpent). */
async function acquireWithin(semaphore: Semaphore, budgetMs: number): Promise<() => void> {
  if (!Number.isFinite(budgetMs)) return semaphore.acquire();
  if (budgetMs <= 0) throw new BudgetSpent();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new BudgetSpent()), budgetMs);
  try {
    return await semaphore.acquire(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves with the tool's result or rejects with ToolTimeoutError when time runs out, even if the
 * tool ignores its signal (its promise is then left to settle on its own, its result discarded).
 */
async function runWithTimeout(
  tool: RegisteredTool,
  call: ToolCall,
  logger: ToolLogger,
  timeoutMs: number,
): Promise<unknown> {
  const controller = new AbortController();
  const timedOut = new ToolTimeoutError(tool.name, timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(timedOut);
      reject(timedOut);
    }, timeoutMs);
  });
  const context: ToolContext = {
    signal: controller.signal,
    callId: call.callId,
    sessionId: call.sessionId,
    attempt: call.attempt,
    idempotencyKey: toolRunIdempotencyKey(call.callId),
    logger,
  };
  const run = Promise.resolve().then(() => tool.run(call.arguments as never, context));
  // A run that loses the race may still reject later; that must not become an unhandled rejection.
  run.catch(() => {});
  try {
    return await Promise.race([run, timeout]);
  } catch (error) {
    // A tool that rethrows its abort reason, or an AbortError caused by our signal, is the timeout.
    if (controller.signal.aborted) throw timedOut;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
