export {
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  createTableWhenActive,
  emulatorClientOptions,
  listenOnLoopback,
  type RunningEmulator,
  type RunningMoto,
  startDynamoDb,
  startKinesis,
  startMoto,
  startSqsS3,
  waitForBucket,
  waitForQueue,
  waitForStreamActive,
  waitForTableActive,
} from "@mcp-pipeline/emulators";
export {
  AWS_BACKENDS,
  type AwsBackend,
  awsBackend,
  startDynamoDbEndpoint,
  startKinesisEndpoint,
  startSqsS3Endpoint,
} from "./backend.js";
export {
  type FaultProxy,
  type FaultProxyOptions,
  type PutRecordsEntryView,
  startKinesisFaultProxy,
} from "./kinesis-fault-proxy.js";
