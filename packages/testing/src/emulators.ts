export {
  emulatorClientOptions,
  listenOnLoopback,
  type RunningEmulator,
  startDynamoDb,
  startKinesis,
  startSqsS3,
} from "@mcp-pipeline/emulators";
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
