data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

# In its environment's own path and with its permissions boundary: the deploy role may create and change
# roles there only, and only with that boundary on them (terraform/bootstrap, docs/security.md).
resource "aws_iam_role" "this" {
  name                 = var.name
  path                 = var.role_path
  permissions_boundary = var.permissions_boundary_arn
  assume_role_policy   = data.aws_iam_policy_document.assume.json
  tags                 = var.tags
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
  # checkov:skip=CKV_AWS_117:No VPC: the functions call AWS APIs and, for tool-worker's http.request, the configured HTTP_TOOL_BASE_URL; a VPC adds NAT and endpoints without limiting where the code connects unless its egress is filtered, a choice of the account's network, not of this module.
  # checkov:skip=CKV_AWS_272:Code signing needs a signing profile per account; artifacts are verified by their SHA-256 in dist/manifest.json.
  # checkov:skip=CKV_AWS_173:The environment holds resource names, tuning and HTTP_TOOL_BASE_URL, and must hold no secret (docs/security.md: no credential in that URL); Lambda encrypts it at rest with an AWS-managed key.
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
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.this.name
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.this]
}
