# The Terraform state of every environment, one key each (mcp-event-pipelines/<env>/terraform.tfstate),
# locked with an S3 lock file beside it (use_lockfile): no DynamoDB lock table.
resource "aws_s3_bucket" "state" {
  # checkov:skip=CKV_AWS_145:SSE-S3 is enough: state holds no secrets (resource names, settings, the alarm e-mail addresses); access is decided by IAM and the bucket policy, which a KMS key would not change.
  # checkov:skip=CKV_AWS_144:Versioning keeps every state version for recovery; a copy in another region is left to accounts whose recovery plan needs one.
  # checkov:skip=CKV_AWS_18:No server access log: it needs a log bucket this root does not create; docs/security.md says to enable CloudTrail S3 data events on this bucket to record every read and write of state.
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

locals {
  # Each environment's state object and its lock file, and nothing else of the bucket.
  state_key = { for env in var.environments : env => "mcp-event-pipelines/${env}/terraform.tfstate" }
  state_objects = {
    for env, key in local.state_key : env => ["${aws_s3_bucket.state.arn}/${key}", "${aws_s3_bucket.state.arn}/${key}.tflock"]
  }
}
