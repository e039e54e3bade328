import { z } from "zod";

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/**
 * Parses a function's environment once, at cold start, and lists every problem at once. A function
 * that starts with a bad setting fails its first invocation loudly instead of misbehaving per record.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "(env)"}: ${issue.message}`),
  );
}

/**
 * An SQS queue URL, checked by shape rather than as a WHATWG URL: emulators answer with hosts such as
 * sqs.us-east-1.127.0.0.1, which URL parsers refuse.
 */
export const sqsQueueUrlSchema = z
  .string()
  .regex(/^https?:\/\/[^/\s]+\/\d{12}\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/, "expected an SQS queue URL");

/** A Kinesis stream name. */
export const streamNameSchema = z.string().regex(/^[a-zA-Z0-9_.-]{1,128}$/, "expected a Kinesis stream name");
