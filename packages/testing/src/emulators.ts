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
  type FaultProxy,
  type FaultProxyOptions,
  type PutRecordsEntryView,
  startKinesisFaultProxy,
} from "./kinesis-fault-proxy.js";
