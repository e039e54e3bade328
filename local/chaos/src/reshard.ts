/**
 * The reshard in the middle of the run: one open shard is split in two, and later its two children are
 * merged back into one. The Kinesis mapping must read a parent to its end before its children
 * (docs/aws-semantics.md §9.1 item 1, §1.5), which is what keeps each partition key in order across it.
 */
import {
  type KinesisClient,
  MergeShardsCommand,
  type Shard,
  SplitShardCommand,
} from "@aws-sdk/client-kinesis";
import { listShards } from "@mcp-pipeline/aws/kinesis-client";
import { waitForStreamActive } from "@mcp-pipeline/emulators";

export interface ReshardStep {
  readonly action: "split" | "merge";
  readonly parents: readonly string[];
  readonly children: readonly string[];
  readonly at: number;
}

const isOpen = (s: Shard) => s.SequenceNumberRange?.EndingSequenceNumber === undefined;

/** Splits the first open shard at the middle of its hash key range; waits for the stream to be ACTIVE. */
export async function splitOneShard(kinesis: KinesisClient, streamName: string): Promise<ReshardStep> {
  const before = await listShards(kinesis, streamName);
  const shard = before.find(isOpen);
  if (!shard?.ShardId || !shard.HashKeyRange?.StartingHashKey || !shard.HashKeyRange.EndingHashKey)
    throw new Error(`stream ${streamName} has no open shard to split`);
  const low = BigInt(shard.HashKeyRange.StartingHashKey);
  const high = BigInt(shard.HashKeyRange.EndingHashKey);
  await kinesis.send(
    new SplitShardCommand({
      StreamName: streamName,
      ShardToSplit: shard.ShardId,
      NewStartingHashKey: ((low + high + 1n) / 2n).toString(),
    }),
  );
  await waitForStreamActive(kinesis, streamName);
  const children = (await listShards(kinesis, streamName))
    .filter((s) => s.ParentShardId === shard.ShardId)
    .map((s) => s.ShardId ?? "");
  return { action: "split", parents: [shard.ShardId], children, at: Date.now() };
}

/** Merges the two children of `split` (adjacent by construction); waits for the stream to be ACTIVE. */
export async function mergeChildren(
  kinesis: KinesisClient,
  streamName: string,
  split: ReshardStep,
): Promise<ReshardStep> {
  const [first, second] = split.children;
  if (!first || !second) throw new Error(`the split of ${split.parents.join(", ")} left no two children`);
  await kinesis.send(
    new MergeShardsCommand({ StreamName: streamName, ShardToMerge: first, AdjacentShardToMerge: second }),
  );
  await waitForStreamActive(kinesis, streamName);
  const children = (await listShards(kinesis, streamName))
    .filter((s) => s.ParentShardId === first && s.AdjacentParentShardId === second)
    .map((s) => s.ShardId ?? "");
  return { action: "merge", parents: [first, second], children, at: Date.now() };
}
