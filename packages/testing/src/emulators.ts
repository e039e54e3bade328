export {
  emulatorClientOptions,
  type InjectedFault,
  listenOnLoopback,
  type RunningEmulator,
  startDynamoDb,
  startFaultProxy,
  startKinesis,
  startSqsS3,
} from "@mcp-pipeline/emulators";
export {
  type DynamoDbFidelityProxy,
  startDynamoDbFidelityProxy,
  startFaithfulDynamoDb,
} from "./dynamodb-fidelity-proxy.js";
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
export { type LaggingCountProxy, startSqsLaggingCountProxy } from "./sqs-lagging-count-proxy.js";
