import * as z from "zod";

// Apart from config.ts so that loadConfig alone does not load zod's full build (see ConfigSchema).

/**
 * An SQS queue URL, checked by shape rather than as a WHATWG URL: emulators answer with hosts such as
 * sqs.us-east-1.127.0.0.1, which URL parsers refuse.
 */
export const sqsQueueUrlSchema = z
  .string()
  .regex(/^https?:\/\/[^/\s]+\/\d{12}\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/, "expected an SQS queue URL");

/** A Kinesis stream name. */
export const streamNameSchema = z.string().regex(/^[a-zA-Z0-9_.-]{1,128}$/, "expected a Kinesis stream name");
