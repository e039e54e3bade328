variable "function_name" {
  description = "The function the mapping invokes."
  type        = string
}

variable "queue_arn" {
  description = "Source queue ARN."
  type        = string
}

variable "fifo" {
  description = "The queue is FIFO: batch size at most 10, no batching window (§3)."
  type        = bool
  default     = false
}

variable "batch_size" {
  description = "Messages per batch."
  type        = number
  default     = 10

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10000
    error_message = "batch_size must be 1-10000 (10 for FIFO)."
  }

  # Rules across inputs that Lambda checks when it creates the mapping: refused here, at plan, instead.
  validation {
    condition     = !var.fifo || var.batch_size <= 10
    error_message = "a FIFO queue's mapping takes at most 10 messages a batch (§3)."
  }

  validation {
    condition     = var.fifo || var.batch_size <= 10 || var.maximum_batching_window_in_seconds >= 1
    error_message = "batch_size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1)."
  }
}

variable "maximum_batching_window_in_seconds" {
  description = "Gather messages this long; required >= 1 when batch_size > 10 (§2.1)."
  type        = number
  default     = 0

  validation {
    condition     = var.maximum_batching_window_in_seconds >= 0 && var.maximum_batching_window_in_seconds <= 300
    error_message = "maximum_batching_window_in_seconds must be 0-300."
  }
}

variable "maximum_concurrency" {
  description = "ScalingConfig.MaximumConcurrency (2-1000); null for none (§2.2)."
  type        = number
  default     = null

  validation {
    condition     = var.maximum_concurrency == null || try(var.maximum_concurrency >= 2 && var.maximum_concurrency <= 1000, false)
    error_message = "maximum_concurrency must be null or 2-1000."
  }
}

variable "report_batch_item_failures" {
  description = "Read partial batch responses (§2.3)."
  type        = bool
  default     = true
}
