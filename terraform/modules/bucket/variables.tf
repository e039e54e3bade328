variable "name" {
  description = "Bucket name."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.name))
    error_message = "A bucket name is 3-63 of [a-z0-9.-], starting and ending with a letter or digit."
  }
}

variable "expiration" {
  description = "When objects are deleted: null for never; else `days` after they are written, every object, or only those that carry the tag `only_tagged` (the quarantine: replayed = true), and with those every object under `also_prefix` (the quarantine: replays/, the replay journals, which name only replayed objects). A version the expiration makes noncurrent goes as many days later."
  type = object({
    days = number
    only_tagged = optional(object({
      key   = string
      value = string
    }))
    also_prefix = optional(string)
  })
  default = null

  validation {
    condition     = var.expiration == null || try(var.expiration.days >= 1 && var.expiration.days <= 36500 && floor(var.expiration.days) == var.expiration.days, false)
    error_message = "expiration.days must be a whole number of days, 1-36500."
  }

  validation {
    condition     = try(var.expiration.only_tagged == null, true) || try(length(var.expiration.only_tagged.key) >= 1 && length(var.expiration.only_tagged.key) <= 128 && length(var.expiration.only_tagged.value) <= 256, false)
    error_message = "expiration.only_tagged: a tag key is 1-128 characters, its value at most 256 (S3's limits)."
  }

  validation {
    condition     = try(var.expiration.also_prefix == null, true) || try(length(var.expiration.also_prefix) >= 1 && endswith(var.expiration.also_prefix, "/") && var.expiration.only_tagged != null, false)
    error_message = "expiration.also_prefix: a key prefix ending in /, beside only_tagged (without it every object expires already)."
  }
}

variable "protection" {
  description = "null for none. Otherwise the objects are the only copy of what they hold: a bucket policy denies deleting an object or a version, deleting the bucket, and changing its lifecycle, versioning, Object Lock or the policy itself to every principal but break_glass_role_arn (to everyone when it is null), and refuses a PutObject without If-None-Match: * (no overwrite)."
  type = object({
    break_glass_role_arn = optional(string)
  })
  default = null

  validation {
    condition     = try(var.protection.break_glass_role_arn == null, true) || can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\\w+=,.@/-]{1,512}$", var.protection.break_glass_role_arn))
    error_message = "protection.break_glass_role_arn must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)."
  }
}

variable "object_lock" {
  description = "null (the default) for no Object Lock. Otherwise every new object version is retained `days` days in `mode`: GOVERNANCE (a principal with s3:BypassGovernanceRetention may delete it early; the protection denies that to all but the break-glass role) or COMPLIANCE (nobody, the root user included, until the days pass). Enabled on the existing versioned bucket: turning it on does not replace the bucket, and it cannot be turned off again."
  type = object({
    mode = string
    days = number
  })
  default = null

  validation {
    condition     = var.object_lock == null || try(contains(["GOVERNANCE", "COMPLIANCE"], var.object_lock.mode), false)
    error_message = "object_lock.mode must be GOVERNANCE or COMPLIANCE."
  }

  validation {
    condition     = var.object_lock == null || try(var.object_lock.days >= 1 && var.object_lock.days <= 36500 && floor(var.object_lock.days) == var.object_lock.days, false)
    error_message = "object_lock.days must be a whole number of days, 1-36500."
  }
}

variable "kms_key_arn" {
  description = "Customer KMS key; null for SSE-S3 (AES256)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags."
  type        = map(string)
  default     = {}
}
