import { describe, expect, it } from "vitest";
import { dlqRedriveConfigSchema, manualActionSchema } from "../../src/config.js";

/**
 * What dlq-redrive makes of each environment and manual action of the tables below (src/config.ts, declared
 * once with light-schema): the values, or the problems (path and message). The snapshot
 * (__snapshots__/config.test.ts.snap) was written when zod copies of the schemas were the reference, and
 * matched them, so a changed range, default or message shows here.
 */
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
  ["SDK retry bases of 20 s", { ...good, SDK_RETRY_BASE_MS: "20000", SDK_THROTTLE_RETRY_BASE_MS: "20000" }],
  ["an SDK retry base of -1", { ...good, SDK_RETRY_BASE_MS: "-1" }],
  ["an SDK throttling retry base of 1.5 ms", { ...good, SDK_THROTTLE_RETRY_BASE_MS: "1.5" }],
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

describe("dlq-redrive's configuration and manual actions", () => {
  it.each(configCases)("configuration, %s: its values or its problems", (_label, env) => {
    expect(outcome(dlqRedriveConfigSchema, env)).toMatchSnapshot();
  });

  it.each(actionCases)("manual action, %s: its values or its problems", (_label, event) => {
    expect(outcome(manualActionSchema, event)).toMatchSnapshot();
  });
});
