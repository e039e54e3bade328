import { KinesisClient, ListShardsCommand, type Shard } from "@aws-sdk/client-kinesis";
import { type ClientOptions, commonClientConfig } from "./client-options.js";

/**
 * The Kinesis client defaults to an HTTP/2 handler (for SubscribeToShard); the data-plane calls used
 * here are plain HTTP/1.1 requests, which every emulator and proxy speaks.
 */
export function kinesisClient(options: ClientOptions = {}): KinesisClient {
  return new KinesisClient(commonClientConfig(options));
}

/**
 * Every shard of a stream, closed ones included (ListShards pages by NextToken alone after the first
 * call). `abortSignal` aborts the page in flight.
 */
export async function listShards(
  kinesis: KinesisClient,
  streamName: string,
  options: { readonly abortSignal?: AbortSignal } = {},
): Promise<Shard[]> {
  const shards: Shard[] = [];
  let token: string | undefined;
  do {
    const page = await kinesis.send(
      new ListShardsCommand(token ? { NextToken: token } : { StreamName: streamName }),
      options.abortSignal ? { abortSignal: options.abortSignal } : {},
    );
    shards.push(...(page.Shards ?? []));
    token = page.NextToken;
  } while (token);
  return shards;
}
