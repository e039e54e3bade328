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
  # checkov:skip=CKV_AWS_116:Never invoked asynchronously: event source mappings invoke synchronously and send a batch that fails for good to the source queue's DLQ or the on-failure destination; dlq-redrive's manual actions are synchronous invokes by an operator. An async-invoke DLQ would receive nothing.
  # checkov:skip=CKV_AWS_117:No VPC resources to reach: the functions call AWS APIs and, for the workers' http.request tool, the one downstream of HTTP_TOOL_BASE_URL; in a VPC both would need NAT or endpoints for no gain.
  # checkov:skip=CKV_AWS_272:No code signing: it needs a signing profile per account, which this repository does not create. apply.yml checks each zip against dist/manifest.json's SHA-256, which catches a corrupted artifact but not a replaced one (the manifest travels with the zips): the build job and GitHub's artifact store are trusted (docs/security.md).
  # checkov:skip=CKV_AWS_173:No customer key for the environment: it holds resource names, tuning and the tools' settings, no secrets (HTTP_TOOL_BASE_URL with credentials is refused at load; the free-form environment setting is not for secrets, docs/security.md); AWS encrypts it at rest with its own key.
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
