// What dlq-redrive does with SQS, loaded on first use (core.ts's `sqsModule`): a failure-queue message that is
// not an on-failure record goes to its DLQ, and a manual action moves a DLQ's messages back. Failure records
// alone need Kinesis and S3, so the SQS client stays out of the import (docs/benchmarks/cold-start.md).
export { sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws/sqs-client";
export { moveMessages, planRedrive } from "@mcp-pipeline/recovery";
