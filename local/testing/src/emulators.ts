export {
  AWS_BACKENDS,
  type AwsBackend,
  awsBackend,
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  createTableWhenActive,
  emulatorClientOptions,
  type InjectedFault,
  listenOnLoopback,
  type RunningEmulator,
  type RunningMoto,
  startDynamoDb,
  startDynamoDbEndpoint,
  startFaultProxy,
  startKinesis,
  startKinesisEndpoint,
  startMoto,
  startSqsS3,
  startSqsS3Endpoint,
  waitForBucket,
  waitForQueue,
  waitForStreamActive,
  waitForTableActive,
} from "@mcp-pipeline/emulators";

export {
  type DynamoDbFidelityProxy,
  startDynamoDbFidelityProxy,
  startFaithfulDynamoDb,
} from "./dynamodb-fidelity-proxy.js";
export {
  EmulatorStack,
  type EmulatorStackOptions,
  type QueueSpec,
  type StackQueue,
} from "./emulator-stack.js";
export {
  type EntryFault,
  type FaultProxy,
  type FaultProxyOptions,
  PutRecordsEntryError,
  type PutRecordsEntryView,
  startKinesisFaultProxy,
} from "./kinesis-fault-proxy.js";
export {
  startKinesisTrimProxy,
  TrimmedStart,
  type TrimProxy,
  type TrimProxyOptions,
} from "./kinesis-trim-proxy.js";
export { DoorAction, type LateAnswer, type RequestDoor, startRequestDoor } from "./request-door.js";
export { type LaggingCountProxy, startSqsLaggingCountProxy } from "./sqs-lagging-count-proxy.js";
