import { describeIssue } from "@mcp-pipeline/contracts/schema-issues";

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/**
 * Anything with zod's `safeParse`: a zod schema (the full build's or zod/mini's), or one of the hand-written
 * schemas of @mcp-pipeline/contracts/light-schema that the functions declare their environment with, which
 * keep zod (and its load time) out of their bundles (docs/benchmarks/cold-start.md).
 */
export interface ConfigSchema<T> {
  safeParse(input: unknown):
    | { readonly success: true; readonly data: T }
    | {
        readonly success: false;
        readonly error: {
          readonly issues: readonly { readonly path: readonly PropertyKey[]; message: string }[];
        };
      };
}

/**
 * Parses a function's environment once, at cold start, and lists every problem at once. A function
 * that starts with a bad setting fails its first invocation loudly instead of misbehaving per record.
 */
export function loadConfig<T>(schema: ConfigSchema<T>, env: Record<string, string | undefined>): T {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues.map((issue) => describeIssue(issue, "(env)")));
}
