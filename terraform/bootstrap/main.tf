# One-time, per AWS account, with an administrator's credentials and local state (see README.md):
# the state bucket the environments use, GitHub's OIDC provider, and per-environment roles that only
# this repository's workflows can assume.
provider "aws" {
  region = var.region
}

data "aws_caller_identity" "current" {}

locals {
  account = data.aws_caller_identity.current.account_id
  oidc    = "token.actions.githubusercontent.com"
}

resource "aws_s3_bucket" "state" {
  # checkov:skip=CKV_AWS_145:SSE-S3 is enough for state without secrets; a KMS key would need its own key policy per account.
  # checkov:skip=CKV_AWS_144:State is versioned; cross-region replication is left to accounts that need it.
  # checkov:skip=CKV_AWS_18:No server access logs: they need a log bucket per account, which is not created here. Who read or wrote the state is recorded only where the account enables CloudTrail data events for S3 (not done by this repository).
  # checkov:skip=CKV2_AWS_62:Nothing consumes state-object events.
  # checkov:skip=CKV2_AWS_61:State must not expire; no lifecycle rule on purpose (noncurrent versions are kept for recovery).
  bucket = "${var.state_bucket_prefix}-${local.account}"
}

resource "aws_s3_bucket_versioning" "state" {
  bucket = aws_s3_bucket.state.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "state" {
  bucket = aws_s3_bucket.state.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_public_access_block" "state" {
  bucket                  = aws_s3_bucket.state.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "state" {
  bucket = aws_s3_bucket.state.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

data "aws_iam_policy_document" "state_tls_only" {
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.state.arn, "${aws_s3_bucket.state.arn}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "state" {
  bucket     = aws_s3_bucket.state.id
  policy     = data.aws_iam_policy_document.state_tls_only.json
  depends_on = [aws_s3_bucket_public_access_block.state]
}

# GitHub's OIDC issuer: workflows get short-lived credentials, no access keys are stored in GitHub.
resource "aws_iam_openid_connect_provider" "github" {
  url            = "https://${local.oidc}"
  client_id_list = ["sts.amazonaws.com"]
}

# Who may assume which role: a deploy role only jobs of this repository running in the matching GitHub
# environment (prod's jobs wait for its required reviewers before they get a token); the plan roles,
# pull requests (which run in no environment).
locals {
  trust_subjects = merge(
    { for env in var.environments : "deploy-${env}" => "repo:${var.github_repository}:environment:${env}" },
    { plan = "repo:${var.github_repository}:pull_request" },
  )
}

data "aws_iam_policy_document" "github_trust" {
  for_each = local.trust_subjects
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [aws_iam_openid_connect_provider.github.arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc}:aud"
      values   = ["sts.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc}:sub"
      values   = [each.value]
    }
  }
}

resource "aws_iam_role" "deploy" {
  for_each             = toset(var.environments)
  name                 = "mcp-${each.value}-deploy"
  assume_role_policy   = data.aws_iam_policy_document.github_trust["deploy-${each.value}"].json
  max_session_duration = 3600
}

# What Terraform needs to manage one environment: its own resources by name prefix, its state key.
data "aws_iam_policy_document" "deploy" {
  # checkov:skip=CKV_AWS_111:The only unconstrained writes are CreateEventSourceMapping (constrained by lambda:FunctionArn instead: it has no resource type), CreateKey (constrained by its environment tag) and the read-only calls below.
  # checkov:skip=CKV_AWS_356:"*" only where AWS has no resource type: CreateEventSourceMapping, CreateKey and ListEventSourceMappings, DescribeLimits, DescribeLogGroups, GetCallerIdentity, ListAliases.
  for_each = toset(var.environments)

  statement {
    sid       = "State"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    resources = ["${aws_s3_bucket.state.arn}/mcp-event-pipelines/${each.value}/*"]
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
      "iam:CreateRole", "iam:DeleteRole", "iam:GetRole", "iam:UpdateAssumeRolePolicy", "iam:TagRole",
      "iam:UntagRole", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies", "iam:PutRolePolicy", "iam:GetRolePolicy",
      "iam:DeleteRolePolicy", "iam:PassRole", "iam:ListInstanceProfilesForRole",
      "cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms", "cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource", "cloudwatch:TagResource",
      "cloudwatch:UntagResource", "cloudwatch:PutDashboard", "cloudwatch:GetDashboard", "cloudwatch:DeleteDashboards",
      "sns:CreateTopic", "sns:DeleteTopic", "sns:GetTopicAttributes", "sns:SetTopicAttributes", "sns:Subscribe",
      "sns:Unsubscribe", "sns:GetSubscriptionAttributes", "sns:ListSubscriptionsByTopic", "sns:TagResource", "sns:UntagResource",
      "sns:ListTagsForResource",
    ]
    resources = [
      "arn:aws:kinesis:${var.region}:${local.account}:stream/mcp-${each.value}-*",
      "arn:aws:sqs:${var.region}:${local.account}:mcp-${each.value}-*",
      "arn:aws:dynamodb:${var.region}:${local.account}:table/mcp-${each.value}-*",
      "arn:aws:s3:::mcp-${each.value}-*",
      "arn:aws:lambda:${var.region}:${local.account}:function:mcp-${each.value}-*",
      "arn:aws:logs:${var.region}:${local.account}:log-group:/aws/lambda/mcp-${each.value}-*",
      "arn:aws:iam::${local.account}:role/mcp-${each.value}-*",
      "arn:aws:cloudwatch:${var.region}:${local.account}:alarm:mcp-${each.value}-*",
      "arn:aws:cloudwatch::${local.account}:dashboard/mcp-${each.value}-*",
      "arn:aws:sns:${var.region}:${local.account}:mcp-${each.value}-*",
    ]
  }
  statement {
    # Existing mappings have ARNs (by UUID); every call is limited to this environment's functions.
    sid       = "EventSourceMappings"
    actions   = ["lambda:GetEventSourceMapping", "lambda:UpdateEventSourceMapping", "lambda:DeleteEventSourceMapping"]
    resources = ["arn:aws:lambda:${var.region}:${local.account}:event-source-mapping:*"]
    condition {
      test     = "StringLike"
      variable = "lambda:FunctionArn"
      values   = ["arn:aws:lambda:${var.region}:${local.account}:function:mcp-${each.value}-*"]
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
      values   = ["arn:aws:lambda:${var.region}:${local.account}:function:mcp-${each.value}-*"]
    }
  }
  statement {
    # The alarm topic's customer-managed key (modules/alarms). Keys have random ids, so they are told
    # apart by the environment tag that modules/pipeline puts on every resource.
    sid = "AlarmTopicKey"
    actions = [
      "kms:DescribeKey", "kms:GetKeyPolicy", "kms:PutKeyPolicy", "kms:GetKeyRotationStatus", "kms:EnableKeyRotation",
      "kms:ListResourceTags", "kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion", "kms:CreateAlias",
      "kms:DeleteAlias", "kms:UpdateAlias",
    ]
    resources = ["arn:aws:kms:${var.region}:${local.account}:key/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/environment"
      values   = [each.value]
    }
  }
  statement {
    sid       = "AlarmTopicKeyAlias"
    actions   = ["kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias"]
    resources = ["arn:aws:kms:${var.region}:${local.account}:alias/mcp-${each.value}-*"]
  }
  statement {
    # A key has no ARN before it exists: CreateKey has no resource type; it must carry the environment tag.
    sid       = "CreateAlarmTopicKey"
    actions   = ["kms:CreateKey", "kms:TagResource"]
    resources = ["*"]
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/environment"
      values   = [each.value]
    }
  }
  statement {
    # List and Describe calls without a resource type.
    sid       = "ReadWithoutResourceType"
    actions   = ["lambda:ListEventSourceMappings", "kinesis:DescribeLimits", "logs:DescribeLogGroups", "sts:GetCallerIdentity", "kms:ListAliases"]
    resources = ["*"]
  }
}

resource "aws_iam_role_policy" "deploy" {
  for_each = toset(var.environments)
  name     = "deploy-${each.value}"
  role     = aws_iam_role.deploy[each.value].id
  policy   = data.aws_iam_policy_document.deploy[each.value].json
}

# Plan roles: read-only, one per environment's state.
resource "aws_iam_role" "plan" {
  for_each             = toset(var.environments)
  name                 = "mcp-${each.value}-plan"
  assume_role_policy   = data.aws_iam_policy_document.github_trust["plan"].json
  max_session_duration = 3600
}

resource "aws_iam_role_policy_attachment" "plan_read_only" {
  for_each   = toset(var.environments)
  role       = aws_iam_role.plan[each.value].name
  policy_arn = "arn:aws:iam::aws:policy/ReadOnlyAccess"
}

data "aws_iam_policy_document" "plan_state" {
  for_each = toset(var.environments)
  statement {
    sid       = "ReadState"
    actions   = ["s3:GetObject"]
    resources = ["${aws_s3_bucket.state.arn}/mcp-event-pipelines/${each.value}/*"]
  }
}

resource "aws_iam_role_policy" "plan_state" {
  for_each = toset(var.environments)
  name     = "read-state-${each.value}"
  role     = aws_iam_role.plan[each.value].id
  policy   = data.aws_iam_policy_document.plan_state[each.value].json
}
