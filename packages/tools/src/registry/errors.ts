import { PermanentError, TransientError } from "@mcp-pipeline/contracts";

/** The job names a tool this worker does not have. Retrying the same job cannot find it. */
export class UnknownToolError extends PermanentError {
  readonly tool: string;

  constructor(tool: string, known: readonly string[]) {
    super("unknown-tool", `no tool named "${tool}" (this worker has: ${known.join(", ") || "none"})`);
    this.name = "UnknownToolError";
    this.tool = tool;
  }
}

export interface ArgumentProblem {
  /** JSON Pointer to the offending value, "" for the arguments object itself. */
  readonly path: string;
  readonly message: string;
}

/** The arguments do not satisfy the tool's inputSchema. */
export class InvalidArgumentsError extends PermanentError {
  readonly tool: string;
  readonly problems: readonly ArgumentProblem[];

  constructor(tool: string, problems: readonly ArgumentProblem[]) {
    const listed = problems.map((p) => `${p.path || "/"} ${p.message}`).join("; ");
    super("invalid-arguments", `arguments for "${tool}" do not match its inputSchema: ${listed}`);
    this.name = "InvalidArgumentsError";
    this.tool = tool;
    this.problems = problems;
  }
}

/** The job's deadline passed before it could start: its result would reach nobody. */
export class DeadlinePassedError extends PermanentError {
  readonly deadline: string;

  constructor(deadline: string, now: number) {
    super("deadline-passed", `the job's deadline ${deadline} passed ${now - Date.parse(deadline)} ms ago`);
    this.name = "DeadlinePassedError";
    this.deadline = deadline;
  }
}

/** The tool did not finish within its timeout (or the invocation's remaining time). */
export class ToolTimeoutError extends TransientError {
  readonly tool: string;
  readonly timeoutMs: number;

  constructor(tool: string, timeoutMs: number) {
    super("tool-timeout", `tool "${tool}" did not finish within ${timeoutMs} ms`);
    this.name = "ToolTimeoutError";
    this.tool = tool;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The invocation's time budget ran out while the call waited for a slot under the tool's concurrency cap:
 * the tool never started. Transient: a later delivery finds a slot.
 */
export class ToolSlotWaitError extends TransientError {
  readonly tool: string;
  readonly waitedMs: number;

  constructor(tool: string, waitedMs: number) {
    super(
      "tool-slot-wait",
      `tool "${tool}" did not start: its time budget ran out (${waitedMs} ms spent waiting for a slot)`,
    );
    this.name = "ToolSlotWaitError";
    this.tool = tool;
    this.waitedMs = waitedMs;
  }
}

/** The tool returned something that is not JSON (undefined, a BigInt, a cycle): a bug in the tool. */
export class InvalidResultError extends PermanentError {
  readonly tool: string;

  constructor(tool: string, reason: string, options?: ErrorOptions) {
    super("invalid-result", `tool "${tool}" returned a value that is not JSON: ${reason}`, options);
    this.name = "InvalidResultError";
    this.tool = tool;
  }
}

/** A tool definition is unusable (bad name, schema that does not compile, bad limits): fails at start-up. */
export class ToolDefinitionError extends Error {
  readonly tool: string;

  constructor(tool: string, message: string, options?: ErrorOptions) {
    super(`tool "${tool}": ${message}`, options);
    this.name = "ToolDefinitionError";
    this.tool = tool;
  }
}
