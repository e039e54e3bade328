export {
  type BatchReport,
  type BatchResult,
  type Consumer,
  type ConsumerHandler,
  consumerHandler,
  type LambdaBatchResponse,
  type ManualActions,
  type MetricUnitName,
  type MetricValues,
  type Sandbox,
} from "./consumer.js";
export { kinesisRecords, type RecordSource, sqsRecords } from "./records.js";
