# The permissions boundary of every role an environment's deploy role creates (the functions' roles,
# modules/function). A role's permissions are its policies' intersected with its boundary, so whatever
# policy the deploy role writes on a function's role, that role can only do what is listed here, and only
# on its own environment's resources: read and write records, messages, items and objects, and write its
# logs and traces. No IAM, no deletion of buckets, tables, queues or streams, nothing of another
# environment, no KMS action (the functions' policies grant none: queues and tables use AWS-owned keys,
# buckets SSE-S3, the stream the AWS-managed alias/aws/kinesis; a customer-managed key for one of them
# would need a statement here naming that key).
# The functions' own policies (modules/pipeline) grant a subset; `npm run iam:check` fails on a statement
# the boundary would deny.
data "aws_iam_policy_document" "function_boundary" {
  # checkov:skip=CKV_AWS_356:X-Ray has no resource-level permissions; this is a boundary (an upper limit), not a grant.
  # checkov:skip=CKV_AWS_111:X-Ray has no resource-level permissions; this is a boundary (an upper limit), not a grant.
  for_each = local.prefix

  statement {
    sid = "Stream"
    actions = [
      "kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:DescribeStreamConsumer", "kinesis:ListShards",
      "kinesis:ListStreamConsumers", "kinesis:GetRecords", "kinesis:GetShardIterator", "kinesis:SubscribeToShard",
      "kinesis:PutRecord", "kinesis:PutRecords",
    ]
    # A consumer's ARN is stream/<name>/consumer/<consumer>:<time>, within the same pattern.
    resources = ["arn:${local.partition}:kinesis:${var.region}:${local.account}:stream/${each.value}-*"]
  }
  statement {
    sid = "Queues"
    actions = [
      "sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
      "sqs:GetQueueUrl", "sqs:ListDeadLetterSourceQueues", "sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:CancelMessageMoveTask",
    ]
    resources = ["arn:${local.partition}:sqs:${var.region}:${local.account}:${each.value}-*"]
  }
  statement {
    sid = "Tables"
    actions = [
      "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
      "dynamodb:ConditionCheckItem", "dynamodb:Query", "dynamodb:DescribeTable",
    ]
    resources = ["arn:${local.partition}:dynamodb:${var.region}:${local.account}:table/${each.value}-*"]
  }
  statement {
    # Objects are written and read, never deleted (the quarantine is the only copy of failed records). A
    # replay reads and sets an object's tags (replayed = true, dlq-redrive's Quarantine statement).
    # In this account only: an S3 ARN names no account, and bucket names are global, so without the
    # condition a bucket of the same name registered elsewhere (after one of ours is deleted) would
    # receive the failed records and results the functions write.
    sid       = "Objects"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:ListBucket", "s3:GetObjectTagging", "s3:PutObjectTagging"]
    resources = ["arn:${local.partition}:s3:::${each.value}-*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceAccount"
      values   = [local.account]
    }
  }
  statement {
    sid       = "OwnLogs"
    actions   = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["arn:${local.partition}:logs:${var.region}:${local.account}:log-group:/aws/lambda/${each.value}-*"]
  }
  statement {
    sid       = "Tracing"
    actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
    resources = ["*"]
  }
}

resource "aws_iam_policy" "function_boundary" {
  for_each    = local.prefix
  name        = "${each.value}-function-boundary"
  description = "Upper limit of every role the ${each.key} deploy role creates: the ${each.key} functions' data on ${each.value}-* resources."
  policy      = data.aws_iam_policy_document.function_boundary[each.key].json
}
