# Plan roles: what `terraform plan` reads to refresh one environment, and nothing else. The describe,
# list and get-configuration calls of this environment's resources (their settings, policies and tags),
# its own state object: no records, messages, items or objects (no kinesis:GetRecords, sqs:ReceiveMessage,
# dynamodb:GetItem/Query/Scan, s3:GetObject of the environment's buckets, logs:GetLogEvents), no other
# environment's state, no lock (plans run with -lock=false). Pull-request code runs with the plan role of
# the environments in plan_on_pull_request (oidc.tf), so that is all such code can read.
resource "aws_iam_role" "plan" {
  for_each             = toset(var.environments)
  name                 = "${local.prefix[each.value]}-plan"
  assume_role_policy   = data.aws_iam_policy_document.github_trust["plan-${each.value}"].json
  max_session_duration = 3600
}

data "aws_iam_policy_document" "plan" {
  for_each                = toset(var.environments)
  source_policy_documents = [data.aws_iam_policy_document.every_role.json]

  statement {
    # Only the state object: not its lock, not another environment's state.
    sid       = "ReadOwnState"
    actions   = ["s3:GetObject"]
    resources = [local.state_objects[each.value][0]]
  }
  statement {
    sid       = "ListState"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.state.arn]
  }
  statement {
    sid = "Configuration"
    actions = [
      "kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:DescribeStreamConsumer", "kinesis:ListStreamConsumers", "kinesis:ListTagsForStream",
      "kinesis:ListTagsForResource",
      "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ListQueueTags",
      "dynamodb:DescribeTable", "dynamodb:DescribeTimeToLive", "dynamodb:DescribeContinuousBackups", "dynamodb:ListTagsOfResource",
      "s3:ListBucket", "s3:GetBucketPolicy", "s3:GetBucketVersioning", "s3:GetEncryptionConfiguration", "s3:GetLifecycleConfiguration",
      "s3:GetBucketPublicAccessBlock", "s3:GetBucketOwnershipControls", "s3:GetBucketTagging", "s3:GetBucketAcl", "s3:GetBucketCORS",
      "s3:GetBucketWebsite", "s3:GetBucketLogging", "s3:GetReplicationConfiguration", "s3:GetBucketRequestPayment", "s3:GetBucketObjectLockConfiguration",
      "s3:GetAccelerateConfiguration", "s3:GetBucketNotification",
      "lambda:GetFunction", "lambda:GetFunctionConfiguration", "lambda:GetFunctionConcurrency", "lambda:ListVersionsByFunction", "lambda:GetFunctionCodeSigningConfig",
      "lambda:ListTags",
      "logs:ListTagsForResource", "logs:ListTagsLogGroup",
      "cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource", "cloudwatch:GetDashboard",
      "sns:GetTopicAttributes", "sns:GetSubscriptionAttributes", "sns:ListSubscriptionsByTopic", "sns:ListTagsForResource",
    ]
    resources = local.environment_resources[each.value]
  }
  statement {
    sid       = "FunctionRoles"
    actions   = ["iam:GetRole", "iam:GetRolePolicy", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies"]
    resources = [local.function_roles[each.value]]
  }
  statement {
    sid       = "EventSourceMappings"
    actions   = ["lambda:GetEventSourceMapping"]
    resources = ["arn:${local.partition}:lambda:${var.region}:${local.account}:event-source-mapping:*"]
    condition {
      test     = "StringLike"
      variable = "lambda:FunctionArn"
      values   = [local.functions[each.value]]
    }
  }
  # The alarm topic's key is read through its key policy, which names this role (modules/alarms); the
  # reads without a resource type and the deny on bootstrap's IAM are in every_role (main.tf).
}

resource "aws_iam_role_policy" "plan" {
  for_each = toset(var.environments)
  name     = "plan-${each.value}"
  role     = aws_iam_role.plan[each.value].id
  policy   = data.aws_iam_policy_document.plan[each.value].json
}
