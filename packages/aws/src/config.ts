import { describeIssue } from "@mcp-pipeline/schema-issues";
import type * as z from "zod";

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/**
 * Any zod schema, the full build's or zod/mini's: both carry `safeParse`. A function whose hot path
 * needs no other zod can declare its configuration with zod/mini and keep zod's full build (and its
 * load time) out of its bundle; this file imports zod's types only.
 */
export type ConfigSchema = z.core.$ZodType & {
  safeParse(
    input: unknown,
  ): { success: true; data: unknown } | { success: false; error: { issues: readonly z.core.$ZodIssue[] } };
};

/**
 * Parses a function's environment once, at cold start, and lists every problem at once. A function
 * that starts with a bad setting fails its first invocation loudly instead of misbehaving per record.
 */
export function loadConfig<S extends ConfigSchema>(
  schema: S,
  env: Record<string, string | undefined>,
): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data as z.output<S>;
  throw new ConfigError(parsed.error.issues.map((issue) => describeIssue(issue, "(env)")));
}
