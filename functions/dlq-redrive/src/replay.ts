// dlq-redrive's quarantine replay, loaded on first use (core.ts's `replayModule`): only a manual invocation
// (`{"action":"replay"}`, docs/operations.md) runs it, and its scan, checks and puts (the quarantine's
// listing, reads, tags and journals, Kinesis's DescribeStreamSummary and PutRecords) stay out of the import
// that every failure-queue batch pays for (docs/benchmarks/cold-start.md).
import type { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import type { s3Client } from "@mcp-pipeline/aws/s3-client";
import {
  checkReplayStream,
  type JournalOutcome,
  planReplay,
  RecoveryRefusedError,
  refusals,
  replayQuarantine,
  scanQuarantine,
} from "@mcp-pipeline/recovery";
import type { DlqRedriveConfig, ManualAction } from "./config.js";

/** Replays quarantined records into the stream; a real run that fails a check is refused before it writes. */
export async function runReplay(
  action: Extract<ManualAction, { action: "replay" }>,
  config: DlqRedriveConfig,
  s3: ReturnType<typeof s3Client>,
  kinesis: ReturnType<typeof kinesisClient>,
): Promise<unknown> {
  const { reason, since, until, session, shardId } = action.filter;
  const scan = await scanQuarantine(
    s3,
    config.QUARANTINE_BUCKET,
    {
      ...(reason !== undefined ? { reason } : {}),
      ...(since !== undefined ? { since: Date.parse(since) } : {}),
      ...(until !== undefined ? { until: Date.parse(until) } : {}),
      ...(session !== undefined ? { session } : {}),
      ...(shardId !== undefined ? { shardId } : {}),
    },
    { fullScan: action.fullScan === true },
  );
  const options = {
    streamName: config.STREAM_NAME,
    dryRun: action.dryRun,
    ratePerSecond: action.ratePerSecond,
    includePermanent: action.includePermanent,
    ...(action.max !== undefined ? { max: action.max } : {}),
  };
  const { checks } = await checkReplayStream(
    kinesis,
    config.STREAM_NAME,
    planReplay(scan.entries, options).items,
  );
  if (!action.dryRun && refusals(checks).length > 0)
    throw new RecoveryRefusedError("replay", refusals(checks));
  // A journal not stored fails nothing (its objects are marked): the result names it, and the next scan
  // reads its objects in full.
  const journalsNotWritten: { key: string; error: string }[] = [];
  const summary = await replayQuarantine(s3, kinesis, config.QUARANTINE_BUCKET, scan.entries, {
    ...options,
    onJournal: (outcome: JournalOutcome) => {
      if (!outcome.written)
        journalsNotWritten.push({
          key: outcome.key,
          error: `${outcome.error.name}: ${outcome.error.message}`,
        });
    },
  });
  return {
    ...summary,
    checks,
    unreadable: scan.unreadable,
    journals: { ...scan.journals, notWritten: journalsNotWritten },
  };
}
