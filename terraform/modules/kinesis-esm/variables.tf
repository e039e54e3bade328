variable "function_name" {
  description = "The function the mapping invokes."
  type        = string
}

variable "event_source_arn" {
  description = "Stream ARN, or the enhanced fan-out consumer ARN."
  type        = string
}

variable "starting_position" {
  description = "TRIM_HORIZON (nothing missed while the mapping starts) or LATEST (§1.1)."
  type        = string
  default     = "TRIM_HORIZON"

  validation {
    condition     = contains(["TRIM_HORIZON", "LATEST"], var.starting_position)
    error_message = "starting_position must be TRIM_HORIZON or LATEST."
  }
}

variable "batch_size" {
  description = "Records per batch."
  type        = number
  default     = 100

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10000
    error_message = "batch_size must be 1-10000 (§1.1)."
  }
}

variable "maximum_batching_window_in_seconds" {
  description = "How long to gather records before invoking."
  type        = number
  default     = 0

  validation {
    condition     = var.maximum_batching_window_in_seconds >= 0 && var.maximum_batching_window_in_seconds <= 300
    error_message = "maximum_batching_window_in_seconds must be 0-300."
  }
}

variable "parallelization_factor" {
  description = "Concurrent batches per shard; order is kept per partition key (§1.2)."
  type        = number
  default     = 1

  validation {
    condition     = var.parallelization_factor >= 1 && var.parallelization_factor <= 10
    error_message = "parallelization_factor must be 1-10."
  }
}

variable "maximum_retry_attempts" {
  description = "Retries of a failed batch; N gives N+1 invocations (§1.3). -1 is infinite, as AWS allows: a poison record then blocks its shard until it expires (lint:config reports it)."
  type        = number
  default     = 3

  validation {
    condition     = var.maximum_retry_attempts >= -1 && var.maximum_retry_attempts <= 10000
    error_message = "maximum_retry_attempts must be -1-10000 (§1.3)."
  }
}

variable "maximum_record_age_in_seconds" {
  description = "Records older than this go to the on-failure destination (§1.3). -1 is infinite, as AWS allows: only the stream's retention then bounds a failing record's wait (lint:config reports it)."
  type        = number
  default     = 3600

  validation {
    condition     = var.maximum_record_age_in_seconds == -1 || (var.maximum_record_age_in_seconds >= 60 && var.maximum_record_age_in_seconds <= 604800)
    error_message = "maximum_record_age_in_seconds must be -1 or 60-604800 (§1.3; values 0-59 are refused by AWS)."
  }
}

variable "bisect_batch_on_function_error" {
  description = "Split a failing batch to isolate a poison record; splitting uses no retries (§1.3)."
  type        = bool
  default     = true
}

variable "report_batch_item_failures" {
  description = "Read partial batch responses (§1.4)."
  type        = bool
  default     = true
}

variable "on_failure_destination_arn" {
  description = "SQS queue for on-failure records (§1.6); null for none (the records are then dropped)."
  type        = string
  default     = null
}
