/** Where log lines of a tool go; Powertools' Logger satisfies it. */
export interface ToolLogger {
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

/** What a tool implementation gets besides its arguments. */
export interface ToolContext {
  /** Aborted when the tool's timeout or the invocation's remaining time runs out: stop and return. */
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly sessionId: string;
  /** 1 on the first delivery of the job, then the queue's receive count. */
  readonly attempt: number;
  /**
   * The same for every run of this job, whatever the attempt (toolRunIdempotencyKey of the callId): give it
   * to a downstream that deduplicates (an `Idempotency-Key` header), since a job can run more than once
   * (docs/tool-workers.md "Idempotency keys").
   */
  readonly idempotencyKey: string;
  readonly logger: ToolLogger;
}

/** A JSON Schema object, as MCP tools declare `inputSchema` (draft 2020-12). */
export type JsonSchema = { readonly type: "object"; readonly [keyword: string]: unknown };

export interface ToolDefinition<Args = Record<string, unknown>, Result = unknown> {
  /** 1-128 of [A-Za-z0-9_.-], as MCP names tools. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** Longest a run may take; the invocation's remaining time can shorten it. */
  readonly timeoutMs: number;
  /** Runs of this tool in flight at once in one function instance: protects its downstream. */
  readonly concurrency: number;
  /**
   * Throw PermanentError for failures a retry cannot fix and TransientError for ones it may; any
   * other error counts as transient. The result must be JSON-serialisable.
   */
  readonly run: (args: Args, context: ToolContext) => Promise<Result>;
}

/** Any tool, whatever its argument type: the registry validates before it calls `run`. */
export type RegisteredTool = ToolDefinition<never, unknown>;

/**
 * Declares a tool. `Args` is what the inputSchema admits; the registry validates before `run` sees
 * anything, so `run` may rely on the type.
 */
export function defineTool<Args = Record<string, unknown>, Result = unknown>(
  definition: ToolDefinition<Args, Result>,
): ToolDefinition<Args, Result> {
  return definition;
}
