variable "name" {
  description = "Bucket name."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.name))
    error_message = "A bucket name is 3-63 of [a-z0-9.-], starting and ending with a letter or digit."
  }
}

variable "expiration_days" {
  description = "Objects are deleted this many days after they are written."
  type        = number

  validation {
    condition     = var.expiration_days >= 1 && floor(var.expiration_days) == var.expiration_days
    error_message = "expiration_days must be a whole number of at least 1."
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
