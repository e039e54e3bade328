/**
 * `npm run lint:config`'s entry (the rules and the command line are @mcp-pipeline/config-lint). It sits
 * here, above the functions, because it reads each function's own default deadline margin from that
 * function's config schema, which a package may not import.
 */
import { ExitCode, runIfMain } from "@mcp-pipeline/cli";
import { type DeadlineMarginDefaults, main as lintConfig } from "@mcp-pipeline/config-lint";
import { workerConfigSchema } from "@mcp-pipeline/worker";
// By path: the functions' entry modules also load their handlers.
import { dlqRedriveConfigSchema } from "../functions/dlq-redrive/src/config.ts";
import { processorConfigSchema } from "../functions/processor/src/config.ts";

/** The functions' own defaults when DEADLINE_MARGIN_MS is not set, read from their config schemas. */
export const DEADLINE_MARGIN_DEFAULTS_MS: DeadlineMarginDefaults = {
  processor: processorConfigSchema.shape.DEADLINE_MARGIN_MS.parse(undefined),
  tool_worker: workerConfigSchema.shape.DEADLINE_MARGIN_MS.parse(undefined),
  fifo_worker: workerConfigSchema.shape.DEADLINE_MARGIN_MS.parse(undefined),
  dlq_redrive: dlqRedriveConfigSchema.shape.DEADLINE_MARGIN_MS.parse(undefined),
};

export const main = (argv: readonly string[]): Promise<number> =>
  lintConfig(argv, DEADLINE_MARGIN_DEFAULTS_MS);

// A crash exits 2, as an unreadable settings file does: 1 means findings only.
runIfMain(import.meta.url, main, ExitCode.Usage);
