data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  name               = var.name
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_cloudwatch_log_group" "this" {
  # checkov:skip=CKV_AWS_338:Retention is an environment setting (14 days in dev, 90 in prod): these are operational logs, the quarantine and DLQs keep the records themselves.
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn
  tags              = var.tags
}

# Least privilege: the function's own statements, on named resources, plus writing its own logs and
# traces. X-Ray has no resource-level permissions, hence its "*".
data "aws_iam_policy_document" "this" {
  statement {
    sid       = "OwnLogs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.this.arn}:*"]
  }

  statement {
    sid       = "Tracing"
    actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
    resources = ["*"]
  }

  dynamic "statement" {
    for_each = var.policy_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }
}

resource "aws_iam_role_policy" "this" {
  name   = "${var.name}-least-privilege"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.this.json
}

resource "aws_lambda_function" "this" {
  # checkov:skip=CKV_AWS_116:Invoked only by event source mappings; failures go to the source's DLQ or on-failure destination, not to an async-invoke DLQ.
  # checkov:skip=CKV_AWS_117:Talks only to AWS APIs (Kinesis, SQS, DynamoDB, S3); no VPC resources to reach.
  # checkov:skip=CKV_AWS_272:Code signing needs a signing profile per account; artifacts are verified by their SHA-256 in dist/manifest.json.
  # checkov:skip=CKV_AWS_173:The environment holds resource names and tuning only, no secrets; AWS encrypts it at rest with its own key.
  function_name                  = var.name
  role                           = aws_iam_role.this.arn
  filename                       = var.artifact.path
  source_code_hash               = var.artifact.sha256
  handler                        = var.artifact.handler
  runtime                        = var.artifact.runtime
  architectures                  = ["arm64"]
  timeout                        = var.timeout_seconds
  memory_size                    = var.memory_mb
  reserved_concurrent_executions = var.reserved_concurrency

  environment {
    variables = var.environment
  }

  tracing_config {
    mode = "Active"
  }

  logging_config {
    # Declared once for Terraform and the local runtime (packages/settings' FUNCTION_LOGGING).
    log_format = jsondecode(file("${path.module}/logging.json")).log_format
    log_group  = aws_cloudwatch_log_group.this.name
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.this]
}
