export {
  AWS_BACKENDS,
  type AwsBackend,
  awsBackend,
  startDynamoDbEndpoint,
  startKinesisEndpoint,
  startSqsS3Endpoint,
} from "./backend.js";
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
export { threadExecArgv } from "./thread-exec-argv.js";
