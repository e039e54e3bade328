import { sqsQueueUrlSchema, streamNameSchema } from "@mcp-pipeline/aws";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { dlqRedriveConfigSchema, manualActionSchema } from "../src/config.js";

/**
 * src/config.ts declares dlq-redrive's environment and its manual actions with hand-written field rules,
 * not zod, for load time (docs/benchmarks/cold-start.md). The zod schemas they replaced, below as they were,
 * are the reference: every bad case and generated inputs must give the same verdict and value, and the
 * same problems (path and message).
 */
const queueUrl = sqsQueueUrlSchema;
const referenceConfig = z.object({
  QUARANTINE_BUCKET: z.string().min(3).max(63),
  STREAM_NAME: streamNameSchema,
  DEAD_LETTER_QUEUE_URL: queueUrl,
  FAILURE_RECORD_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  QUARANTINE_PUT_CONCURRENCY: z.coerce.number().int().min(1).max(128).default(32),
  DEADLINE_MARGIN_MS: z.coerce.number().int().min(0).max(900_000).default(10_000),
});
const referenceAction = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("replay"),
    filter: z
      .object({
        reason: z.string().optional(),
        since: z.iso.datetime().optional(),
        until: z.iso.datetime().optional(),
        session: z.string().optional(),
        shardId: z.string().optional(),
      })
      .default({}),
    dryRun: z.boolean().default(true),
    ratePerSecond: z.number().int().min(1).max(1_000).default(100),
    includePermanent: z.boolean().default(false),
    max: z.number().int().min(1).max(1_000_000).optional(),
  }),
  z.object({
    action: z.literal("redrive-dlq"),
    dlqUrl: queueUrl,
    sourceUrl: queueUrl,
    dryRun: z.boolean().default(true),
    ratePerSecond: z.number().int().min(1).max(500).optional(),
  }),
]);

type Parser = { safeParse(input: unknown): { success: boolean; data?: unknown; error?: unknown } };
type Failure = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

function outcome(schema: Parser, input: unknown) {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { success: true, data: parsed.data };
  const problems = (parsed.error as Failure).issues.map(
    (i) => `${i.path.map(String).join(".")}: ${i.message}`,
  );
  return { success: false, problems: problems.sort() };
}

const good = {
  QUARANTINE_BUCKET: "quarantine",
  STREAM_NAME: "events",
  DEAD_LETTER_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/failures-dlq",
};
const dlq = good.DEAD_LETTER_QUEUE_URL;

const configCases: [string, Record<string, string | undefined>][] = [
  ["the minimum", good],
  [
    "every setting",
    { ...good, FAILURE_RECORD_CONCURRENCY: "64", QUARANTINE_PUT_CONCURRENCY: "1", DEADLINE_MARGIN_MS: "0" },
  ],
  ["nothing", {}],
  ["a bucket name of 2 characters", { ...good, QUARANTINE_BUCKET: "qb" }],
  ["a stream name with a slash", { ...good, STREAM_NAME: "a/b" }],
  ["a queue URL that is an ARN", { ...good, DEAD_LETTER_QUEUE_URL: "arn:aws:sqs:eu-west-1:123456789012:q" }],
  ["failure record concurrency 65", { ...good, FAILURE_RECORD_CONCURRENCY: "65" }],
  ["PUT concurrency 0", { ...good, QUARANTINE_PUT_CONCURRENCY: "0" }],
  ["PUT concurrency 129", { ...good, QUARANTINE_PUT_CONCURRENCY: "129" }],
  ["PUT concurrency many", { ...good, QUARANTINE_PUT_CONCURRENCY: "many" }],
  ["a margin of 2.5 ms", { ...good, DEADLINE_MARGIN_MS: "2.5" }],
];

const actionCases: [string, unknown][] = [
  ["no event", undefined],
  ["null", null],
  ["an array", []],
  ["a replay with defaults", { action: "replay" }],
  [
    "a replay with every filter",
    {
      action: "replay",
      filter: {
        reason: "bad-json",
        since: "2026-11-30T00:00:00Z",
        until: "2026-11-30T10:00:00.123456Z",
        session: "s",
        shardId: "shardId-000000000000",
      },
      dryRun: false,
      ratePerSecond: 1000,
      extra: 1,
    },
  ],
  ["an unknown action", { action: "delete-everything" }],
  ["no action", { dryRun: false }],
  ["a replay with a bad time", { action: "replay", filter: { since: "yesterday" } }],
  ["a replay with an offset time", { action: "replay", filter: { until: "2026-11-30T10:00:00+01:00" } }],
  ["a replay with a filter that is not an object", { action: "replay", filter: "all" }],
  ["a replay with a numeric reason", { action: "replay", filter: { reason: 3 } }],
  ["a replay with dryRun as text", { action: "replay", dryRun: "false" }],
  ["a replay at 1,001 per second", { action: "replay", ratePerSecond: 1001 }],
  ["a replay at 0.5 per second", { action: "replay", ratePerSecond: 0.5 }],
  ["a redrive without queue URLs", { action: "redrive-dlq" }],
  [
    "a redrive",
    { action: "redrive-dlq", dlqUrl: dlq, sourceUrl: dlq.replace("-dlq", ""), ratePerSecond: 10 },
  ],
  ["a redrive at 501 per second", { action: "redrive-dlq", dlqUrl: dlq, sourceUrl: dlq, ratePerSecond: 501 }],
  ["a redrive with a queue name", { action: "redrive-dlq", dlqUrl: "failures-dlq", sourceUrl: dlq }],
];

describe("dlq-redrive's configuration and manual actions against the zod schemas they replaced", () => {
  it.each(configCases)("configuration, %s: the same values or the same problems", (_label, env) => {
    expect(outcome(dlqRedriveConfigSchema, env)).toEqual(outcome(referenceConfig, env));
  });

  it.each(actionCases)("manual action, %s: the same values or the same problems", (_label, event) => {
    expect(outcome(manualActionSchema, event)).toEqual(outcome(referenceAction, event));
  });

  it("agree on generated manual actions", () => {
    const value = fc.oneof(
      fc.constantFrom(
        undefined,
        null,
        true,
        false,
        0,
        1,
        100,
        501,
        1000,
        1.5,
        "x",
        dlq,
        "2026-11-30T00:00:00Z",
      ),
      fc.string({ maxLength: 10 }),
      fc.integer(),
    );
    const action = fc.record(
      {
        action: fc.oneof(fc.constantFrom("replay", "redrive-dlq", "other"), value),
        filter: fc.oneof(
          value,
          fc.record(
            { reason: value, since: value, until: value, session: value, shardId: value },
            { requiredKeys: [] },
          ),
        ),
        dryRun: value,
        ratePerSecond: value,
        dlqUrl: value,
        sourceUrl: value,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(action, value), (event) => {
        expect(outcome(manualActionSchema, event)).toEqual(outcome(referenceAction, event));
      }),
      { numRuns: 3_000 },
    );
  });
});
