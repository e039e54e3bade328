export {
  emulatorClientOptions,
  listenOnLoopback,
  type RunningEmulator,
  startDynamoDb,
  startKinesis,
  startSqsS3,
} from "@mcp-pipeline/emulators";
export {
  type FaultProxy,
  type FaultProxyOptions,
  type PutRecordsEntryView,
  startKinesisFaultProxy,
} from "./kinesis-fault-proxy.js";
