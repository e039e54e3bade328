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
  type FaultProxy,
  type FaultProxyOptions,
  type PutRecordsEntryView,
  startKinesisFaultProxy,
} from "./kinesis-fault-proxy.js";
