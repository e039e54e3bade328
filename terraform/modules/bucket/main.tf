resource "aws_s3_bucket" "this" {
  # checkov:skip=CKV_AWS_144:No copy in a second region. The quarantine is protected in place instead (versioning, conditional writes, a policy that denies deletion to all but the break-glass role, Object Lock as an option), which covers deletion and overwrite but not the loss of the region; a regional copy is the account's backup plan's to make (AWS Backup for S3, docs/security.md). Results are pointed at by the tool-calls table, which has no replica either.
  # checkov:skip=CKV_AWS_18:No server access logs: they need a log bucket per account, which this repository does not create. Who read or changed which object is recorded only where the account enables CloudTrail data events for S3 (docs/security.md says to, for the quarantine).
  # checkov:skip=CKV2_AWS_62:No event notifications: nothing consumes object events; dlq-redrive and the recovery CLI list and read on demand.
  bucket        = var.name
  force_destroy = false
  tags          = var.tags
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

# Objects expire only as var.expiration says: never (null), or N days after they are written, every
# object or only those with a tag (the quarantine: replayed = true, set once a record is back in the
# stream). Incomplete multipart uploads are always cleaned up: they hold no object.
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    id     = "abort-incomplete-uploads"
    status = "Enabled"
    filter {}

    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }

  # Every object (the results bucket).
  dynamic "rule" {
    for_each = try(var.expiration.only_tagged == null, false) ? [var.expiration] : []
    content {
      id     = "expire"
      status = "Enabled"
      filter {}

      expiration {
        days = rule.value.days
      }

      # The version an expiration turns noncurrent goes after as many days again.
      noncurrent_version_expiration {
        noncurrent_days = rule.value.days
      }

      abort_incomplete_multipart_upload {
        days_after_initiation = 1
      }
    }
  }

  # Only objects with the tag (the quarantine: replayed = true). S3 refuses an abort beside a tag
  # filter; the first rule covers incomplete uploads.
  dynamic "rule" {
    for_each = try(var.expiration.only_tagged != null, false) ? [var.expiration] : []
    content {
      id     = "expire"
      status = "Enabled"

      filter {
        tag {
          key   = rule.value.only_tagged.key
          value = rule.value.only_tagged.value
        }
      }

      expiration {
        days = rule.value.days
      }

      noncurrent_version_expiration {
        noncurrent_days = rule.value.days
      }
    }
  }

  # And every object under a prefix, as many days after it is written (the quarantine's replay journals,
  # replays/: each names objects tagged replayed, and is of no use once they are gone; a journal that
  # outlives them names keys a scan no longer lists, and is ignored).
  dynamic "rule" {
    for_each = try(var.expiration.also_prefix != null, false) ? [var.expiration] : []
    content {
      id     = "expire-prefix"
      status = "Enabled"

      filter {
        prefix = rule.value.also_prefix
      }

      expiration {
        days = rule.value.days
      }

      noncurrent_version_expiration {
        noncurrent_days = rule.value.days
      }
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

# Object Lock, when asked for: every new object version is kept for var.object_lock.days (GOVERNANCE: only
# a principal with s3:BypassGovernanceRetention may shorten it, and the protection policy denies that to
# all but the break-glass role; COMPLIANCE: nobody, the root user included). Enabled on the existing,
# versioned bucket, so that turning it on does not replace the bucket.
resource "aws_s3_bucket_object_lock_configuration" "this" {
  count  = var.object_lock == null ? 0 : 1
  bucket = aws_s3_bucket.this.id

  rule {
    default_retention {
      mode = var.object_lock.mode
      days = var.object_lock.days
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

locals {
  # Deny statements exempt the break-glass role when there is one; without one they hold for everyone,
  # and only the account's root user can remove the policy (AWS's way out of a bucket policy lockout).
  exempt = var.protection == null ? [] : compact([var.protection.break_glass_role_arn])
}

data "aws_iam_policy_document" "this" {
  # TLS only: any request over plain HTTP is refused.
  statement {
    sid     = "DenyInsecureTransport"
    effect  = "Deny"
    actions = ["s3:*"]
    resources = [
      aws_s3_bucket.this.arn,
      "${aws_s3_bucket.this.arn}/*",
    ]
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

  # The objects are the only copy of what they hold: nobody but the break-glass role deletes one (or a
  # version of one), or takes away what protects them (lifecycle, versioning, Object Lock, this policy).
  dynamic "statement" {
    for_each = var.protection == null ? [] : [1]
    content {
      sid    = "DenyDeletionAndUnprotecting"
      effect = "Deny"
      actions = [
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:DeleteBucket",
        "s3:PutLifecycleConfiguration",
        "s3:PutBucketVersioning",
        "s3:PutBucketObjectLockConfiguration",
        "s3:BypassGovernanceRetention",
        "s3:PutBucketPolicy",
        "s3:DeleteBucketPolicy",
      ]
      resources = [
        aws_s3_bucket.this.arn,
        "${aws_s3_bucket.this.arn}/*",
      ]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
      dynamic "condition" {
        for_each = length(local.exempt) == 0 ? [] : [1]
        content {
          test     = "ArnNotEquals"
          variable = "aws:PrincipalArn"
          values   = local.exempt
        }
      }
    }
  }

  # A write must not replace an object: a PutObject (or a copy) without If-None-Match: * is refused, and
  # with it S3 refuses an existing key (412). The quarantine writer always sends it.
  dynamic "statement" {
    for_each = var.protection == null ? [] : [1]
    content {
      sid       = "DenyOverwrite"
      effect    = "Deny"
      actions   = ["s3:PutObject"]
      resources = ["${aws_s3_bucket.this.arn}/*"]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
      condition {
        test     = "Null"
        variable = "s3:if-none-match"
        values   = ["true"]
      }
      dynamic "condition" {
        for_each = length(local.exempt) == 0 ? [] : [1]
        content {
          test     = "ArnNotEquals"
          variable = "aws:PrincipalArn"
          values   = local.exempt
        }
      }
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = data.aws_iam_policy_document.this.json
  # Last: once the protection is in place, the lifecycle, versioning and Object Lock above can no longer
  # be changed but by the break-glass role.
  depends_on = [
    aws_s3_bucket_public_access_block.this,
    aws_s3_bucket_lifecycle_configuration.this,
    aws_s3_bucket_versioning.this,
    aws_s3_bucket_object_lock_configuration.this,
  ]
}
