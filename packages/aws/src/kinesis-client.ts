import { KinesisClient } from "@aws-sdk/client-kinesis";
import { type ClientOptions, commonClientConfig } from "./client-options.js";

/**
 * The Kinesis client defaults to an HTTP/2 handler (for SubscribeToShard); the data-plane calls used
 * here are plain HTTP/1.1 requests, which every emulator and proxy speaks.
 */
export function kinesisClient(options: ClientOptions = {}): KinesisClient {
  return new KinesisClient(commonClientConfig(options));
}
