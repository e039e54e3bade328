export {
  AWS_BACKENDS,
  type AwsBackend,
  awsBackend,
  startDynamoDbEndpoint,
  startKinesisEndpoint,
  startSqsS3Endpoint,
} from "./backend.js";
export {
  type DynamoDbFidelityProxy,
  startDynamoDbFidelityProxy,
  startFaithfulDynamoDb,
} from "./dynamodb-fidelity-proxy.js";
export type { DynamoDbDelays } from "./dynamodb-server.mjs";
export {
  type EmbeddedEmulators,
  type EmulatorDelays,
  type EmulatorThread,
  emulatorClientOptions,
  healthCheck,
  type KinesisDelays,
  type RequestCounts,
  startDynamoDb,
  startEmulators,
  startEmulatorThread,
  startKinesis,
  startSqsS3,
} from "./embedded.js";
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
export { listenOnLoopback, type RunningEmulator } from "./loopback.js";
export { MotoStartError, motoServerPath, type RunningMoto, startMoto } from "./moto.js";
export {
  type AwsJsonCall,
  AwsJsonContentType,
  answerWith,
  behindProxy,
  callAwsJson,
  exchange,
  forward,
  type InjectedFault,
  type ProxiedCall,
  passThrough,
  readBody,
  relay,
  startAwsJsonProxy,
  startFaultProxy,
  type UpstreamAnswer,
} from "./proxy.js";
export {
  createBucketWhenReady,
  createQueueWhenReady,
  createStreamWhenActive,
  createTableWhenActive,
  type ReadyWaitOptions,
  ResourceNotReadyError,
  waitForBucket,
  waitForQueue,
  waitForStreamActive,
  waitForTableActive,
} from "./ready.js";
export { DoorAction, type LateAnswer, type RequestDoor, startRequestDoor } from "./request-door.js";
export { ESM_SYSTEM_ATTRIBUTES, toSqsEventRecord } from "./sqs-event-record.js";
export { type LaggingCountProxy, startSqsLaggingCountProxy } from "./sqs-lagging-count-proxy.js";
export { threadExecArgv } from "./thread-exec-argv.js";
