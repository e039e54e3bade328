import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";

/** Messages a queue holds (visible, in flight, delayed). */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}
