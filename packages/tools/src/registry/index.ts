export {
  type ArgumentProblem,
  DeadlinePassedError,
  InvalidArgumentsError,
  InvalidResultError,
  ToolDefinitionError,
  ToolSlotWaitError,
  ToolTimeoutError,
  UnknownToolError,
} from "./errors.js";
export { TOOL_RUN_KEY_NAMESPACE, toolRunIdempotencyKey } from "./idempotency-key.js";
export {
  type InvokeOptions,
  type ToolCall,
  ToolRegistry,
  type ToolRun,
} from "./registry.js";
export { Semaphore } from "./semaphore.js";
export {
  defineTool,
  type JsonSchema,
  type RegisteredTool,
  type ToolContext,
  type ToolDefinition,
  type ToolLogger,
} from "./tool.js";
export {
  type ArgumentValidator,
  type PrecompiledValidators,
  precompiledValidators,
  type SchemaCompiler,
  type ValidationError,
} from "./validator.js";
