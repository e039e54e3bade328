// The function of docs/recipes/bisect-partial-split.md, deployed as index.mjs (runtime nodejs22.x, which
// provides the AWS SDK). Every invocation returns one partial answer: it reports the batch's second record
// as failed (its only record, in a batch of one), so each invocation finishes exactly one record when the
// mapping splits at the returned sequence number. Before answering it sends what it was given to the
// attempts queue, so the script can print every invocation; the answer does not depend on that send.
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";

// Requests go to the regional endpoint (or AWS_ENDPOINT_URL_SQS), whatever host a queue URL names:
// emulators hand out queue URLs whose hosts are not valid URLs.
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });

export const handler = async (event, context) => {
  const sequenceNumbers = event.Records.map((record) => record.kinesis.sequenceNumber);
  const reported = sequenceNumbers.length > 1 ? sequenceNumbers[1] : sequenceNumbers[0];
  try {
    await sqs.send(
      new SendMessageCommand({
        // biome-ignore lint/suspicious/noUndeclaredEnvVars: a Lambda function's environment, no turbo task.
        QueueUrl: process.env.ATTEMPTS_QUEUE_URL,
        MessageBody: JSON.stringify({
          requestId: context.awsRequestId,
          at: new Date().toISOString(),
          sequenceNumbers,
          reported,
        }),
      }),
    );
  } catch (error) {
    // A thrown error would be a function error, which Lambda bisects in halves: another experiment. The
    // script then lacks this invocation and says its count is short.
    console.error(`attempt not recorded: ${error}`);
  }
  return { batchItemFailures: [{ itemIdentifier: reported }] };
};
