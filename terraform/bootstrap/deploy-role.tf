# Deploy roles: what Terraform needs to manage one environment, and nothing that reaches beyond it. In
# one account, no environment's role can touch another's resources, roles or state, nor any role or
# policy this root creates (docs/security.md). The roles the deploy role creates (the functions') carry
# the environment's permissions boundary (function-boundary.tf), so a policy it writes can never grant
# more than the boundary allows.
resource "aws_iam_role" "deploy" {
  for_each             = toset(var.environments)
  name                 = "${local.prefix[each.value]}-deploy"
  assume_role_policy   = data.aws_iam_policy_document.github_trust["deploy-${each.value}"].json
  max_session_duration = 3600
}

locals {
  # Every ARN pattern of an environment's resources (its name prefix), but its IAM roles.
  environment_resources = {
    for env, p in local.prefix : env => [
      "arn:${local.partition}:kinesis:${var.region}:${local.account}:stream/${p}-*",
      "arn:${local.partition}:sqs:${var.region}:${local.account}:${p}-*",
      "arn:${local.partition}:dynamodb:${var.region}:${local.account}:table/${p}-*",
      "arn:${local.partition}:s3:::${p}-*",
      "arn:${local.partition}:lambda:${var.region}:${local.account}:function:${p}-*",
      "arn:${local.partition}:logs:${var.region}:${local.account}:log-group:/aws/lambda/${p}-*",
      "arn:${local.partition}:cloudwatch:${var.region}:${local.account}:alarm:${p}-*",
      "arn:${local.partition}:cloudwatch::${local.account}:dashboard/${p}-*",
      "arn:${local.partition}:sns:${var.region}:${local.account}:${p}-*",
    ]
  }
  boundary_arn = { for env, p in local.prefix : env => "${local.iam}:policy/${p}-function-boundary" }
  # The IAM calls that write a role or its policies and that IAM can condition on the role's permissions
  # boundary (iam:PermissionsBoundary): allowed only on roles that carry the environment's boundary.
  bounded_role_writes = ["iam:CreateRole", "iam:PutRolePolicy", "iam:DeleteRolePolicy", "iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:PutRolePermissionsBoundary"]
}

data "aws_iam_policy_document" "deploy" {
  # checkov:skip=CKV_AWS_111:Writes without a resource constraint are CreateEventSourceMapping (constrained by lambda:FunctionArn instead: it has no resource type) and CreateKey (no resource type; the new key's policy names its administrators); every other write names this environment's resources.
  # checkov:skip=CKV_AWS_356:"*" only where AWS has no resource type (CreateEventSourceMapping, constrained by lambda:FunctionArn; CreateKey) and in the Deny statements, on purpose.
  for_each                = toset(var.environments)
  source_policy_documents = [data.aws_iam_policy_document.every_role.json]

  statement {
    sid       = "State"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    resources = local.state_objects[each.value]
  }
  statement {
    sid       = "StateList"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.state.arn]
  }
  statement {
    sid = "PipelineResources"
    actions = [
      "kinesis:CreateStream", "kinesis:DeleteStream", "kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:DescribeStreamConsumer",
      "kinesis:RegisterStreamConsumer", "kinesis:DeregisterStreamConsumer", "kinesis:ListStreamConsumers", "kinesis:AddTagsToStream", "kinesis:RemoveTagsFromStream",
      "kinesis:ListTagsForStream", "kinesis:ListTagsForResource", "kinesis:TagResource", "kinesis:UntagResource", "kinesis:IncreaseStreamRetentionPeriod",
      "kinesis:DecreaseStreamRetentionPeriod", "kinesis:EnableEnhancedMonitoring", "kinesis:DisableEnhancedMonitoring", "kinesis:StartStreamEncryption", "kinesis:StopStreamEncryption",
      "kinesis:UpdateShardCount", "kinesis:UpdateStreamMode", "kinesis:ListShards",
      "sqs:CreateQueue", "sqs:DeleteQueue", "sqs:GetQueueAttributes", "sqs:SetQueueAttributes", "sqs:GetQueueUrl",
      "sqs:ListQueueTags", "sqs:TagQueue", "sqs:UntagQueue",
      "dynamodb:CreateTable", "dynamodb:DeleteTable", "dynamodb:DescribeTable", "dynamodb:UpdateTable", "dynamodb:DescribeTimeToLive",
      "dynamodb:UpdateTimeToLive", "dynamodb:DescribeContinuousBackups", "dynamodb:UpdateContinuousBackups", "dynamodb:ListTagsOfResource", "dynamodb:TagResource",
      "dynamodb:UntagResource",
      "s3:CreateBucket", "s3:DeleteBucket", "s3:ListBucket", "s3:GetBucketPolicy", "s3:PutBucketPolicy",
      "s3:DeleteBucketPolicy", "s3:GetBucketVersioning", "s3:PutBucketVersioning", "s3:GetEncryptionConfiguration", "s3:PutEncryptionConfiguration",
      "s3:GetLifecycleConfiguration", "s3:PutLifecycleConfiguration", "s3:GetBucketPublicAccessBlock", "s3:PutBucketPublicAccessBlock", "s3:GetBucketOwnershipControls",
      "s3:PutBucketOwnershipControls", "s3:GetBucketTagging", "s3:PutBucketTagging", "s3:GetBucketAcl", "s3:GetBucketCORS",
      "s3:GetBucketWebsite", "s3:GetBucketLogging", "s3:GetReplicationConfiguration", "s3:GetBucketRequestPayment", "s3:GetBucketObjectLockConfiguration",
      "s3:GetAccelerateConfiguration", "s3:GetBucketNotification",
      "lambda:CreateFunction", "lambda:DeleteFunction", "lambda:GetFunction", "lambda:GetFunctionConfiguration", "lambda:UpdateFunctionCode",
      "lambda:UpdateFunctionConfiguration", "lambda:PutFunctionConcurrency", "lambda:DeleteFunctionConcurrency", "lambda:GetFunctionConcurrency", "lambda:ListVersionsByFunction",
      "lambda:GetFunctionCodeSigningConfig", "lambda:TagResource", "lambda:UntagResource", "lambda:ListTags",
      "logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:PutRetentionPolicy", "logs:DeleteRetentionPolicy", "logs:TagResource",
      "logs:UntagResource", "logs:ListTagsForResource", "logs:ListTagsLogGroup", "logs:TagLogGroup",
      "cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms", "cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource", "cloudwatch:TagResource",
      "cloudwatch:UntagResource", "cloudwatch:PutDashboard", "cloudwatch:GetDashboard", "cloudwatch:DeleteDashboards",
      "sns:CreateTopic", "sns:DeleteTopic", "sns:GetTopicAttributes", "sns:SetTopicAttributes", "sns:Subscribe",
      "sns:Unsubscribe", "sns:GetSubscriptionAttributes", "sns:ListSubscriptionsByTopic", "sns:TagResource", "sns:UntagResource",
      "sns:ListTagsForResource",
    ]
    resources = local.environment_resources[each.value]
  }
  statement {
    # The functions' roles, in the environment's own path, only with its permissions boundary on them.
    sid       = "FunctionRolesWithBoundary"
    actions   = local.bounded_role_writes
    resources = [local.function_roles[each.value]]
    condition {
      test     = "StringEquals"
      variable = "iam:PermissionsBoundary"
      values   = [local.boundary_arn[each.value]]
    }
  }
  statement {
    # The rest of a role's life cycle, which IAM cannot condition on the boundary: reading it, tagging it
    # and deleting it. No UpdateAssumeRolePolicy: a function role's trust (Lambda) never changes.
    sid       = "FunctionRoles"
    actions   = ["iam:GetRole", "iam:DeleteRole", "iam:TagRole", "iam:UntagRole", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies", "iam:GetRolePolicy", "iam:ListInstanceProfilesForRole"]
    resources = [local.function_roles[each.value]]
  }
  statement {
    # The functions' roles go to Lambda only.
    sid       = "PassFunctionRolesToLambda"
    actions   = ["iam:PassRole"]
    resources = [local.function_roles[each.value]]
    condition {
      test     = "StringEquals"
      variable = "iam:PassedToService"
      values   = ["lambda.amazonaws.com"]
    }
  }
  statement {
    # Existing mappings have ARNs (by UUID); every call is limited to this environment's functions.
    sid       = "EventSourceMappings"
    actions   = ["lambda:GetEventSourceMapping", "lambda:UpdateEventSourceMapping", "lambda:DeleteEventSourceMapping"]
    resources = ["arn:${local.partition}:lambda:${var.region}:${local.account}:event-source-mapping:*"]
    condition {
      test     = "StringLike"
      variable = "lambda:FunctionArn"
      values   = [local.functions[each.value]]
    }
  }
  statement {
    # A mapping has no ARN before it exists: CreateEventSourceMapping has no resource type.
    sid       = "CreateEventSourceMapping"
    actions   = ["lambda:CreateEventSourceMapping"]
    resources = ["*"]
    condition {
      test     = "StringLike"
      variable = "lambda:FunctionArn"
      values   = [local.functions[each.value]]
    }
  }
  statement {
    # The alarm topic's key (modules/alarms). A key has no ARN before it exists and CreateKey has no
    # resource type. Nothing else of any key is granted here: the key's own policy names this role as its
    # administrator (environments/common/main.tf), so this role manages the keys it created with that
    # policy and no other, whatever their tags or aliases say. No kms:TagResource at all: a tag grants
    # nothing in this account's key permissions, and a role that could tag keys could re-tag another's.
    sid       = "CreateAlarmTopicKey"
    actions   = ["kms:CreateKey"]
    resources = ["*"]
  }
  statement {
    sid       = "AlarmTopicKeyAlias"
    actions   = ["kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias"]
    resources = ["arn:${local.partition}:kms:${var.region}:${local.account}:alias/${local.prefix[each.value]}-*"]
  }

  # Explicit denies: they hold whatever an Allow above (or a policy attached later) says; bootstrap's own
  # IAM is denied in the statements every role shares (main.tf).
  statement {
    sid       = "DenyRoleWritesWithoutBoundary"
    effect    = "Deny"
    actions   = local.bounded_role_writes
    resources = ["*"]
    condition {
      test     = "StringNotEquals"
      variable = "iam:PermissionsBoundary"
      values   = [local.boundary_arn[each.value]]
    }
  }
  statement {
    sid       = "DenyBoundaryRemoval"
    effect    = "Deny"
    actions   = ["iam:DeleteRolePermissionsBoundary", "iam:CreatePolicyVersion", "iam:SetDefaultPolicyVersion", "iam:DeletePolicyVersion"]
    resources = ["*"]
  }
  statement {
    # An alarm's actions are carried out by CloudWatch, not by this role: without this, an alarm of this
    # environment could page another environment's topic (whose key lets CloudWatch in) with this
    # environment's words, or stop EC2 instances. Only this environment's topics; an alarm without actions
    # is not affected (ForAnyValue of no value is false). cloudwatch:AlarmActions covers the actions of
    # every state (ALARM, OK, INSUFFICIENT_DATA).
    sid       = "DenyAlarmActionsOutsideEnvironment"
    effect    = "Deny"
    actions   = ["cloudwatch:PutMetricAlarm", "cloudwatch:PutCompositeAlarm"]
    resources = ["*"]
    condition {
      test     = "ForAnyValue:StringNotLike"
      variable = "cloudwatch:AlarmActions"
      values   = ["arn:${local.partition}:sns:${var.region}:${local.account}:${local.prefix[each.value]}-*"]
    }
  }
  statement {
    sid       = "DenyKeyPolicyLockoutBypass"
    effect    = "Deny"
    actions   = ["kms:CreateKey", "kms:PutKeyPolicy"]
    resources = ["*"]
    condition {
      test     = "Bool"
      variable = "kms:BypassPolicyLockoutSafetyCheck"
      values   = ["true"]
    }
  }
}

resource "aws_iam_role_policy" "deploy" {
  for_each = toset(var.environments)
  name     = "deploy-${each.value}"
  role     = aws_iam_role.deploy[each.value].id
  policy   = data.aws_iam_policy_document.deploy[each.value].json
}
