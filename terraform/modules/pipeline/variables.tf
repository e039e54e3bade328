variable "environment" {
  description = "Environment name (dev, prod...)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,15}$", var.environment))
    error_message = "environment must be 2-16 of [a-z0-9-], starting with a letter."
  }
}

variable "region" {
  description = "AWS region."
  type        = string
}

variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name_prefix))
    error_message = "name_prefix must be 2-31 of [a-z0-9-], starting with a letter."
  }
}

variable "stream" {
  description = "The lifecycle stream."
  type = object({
    mode                   = string
    shard_count            = number
    retention_period_hours = number
  })

  validation {
    condition     = var.stream.retention_period_hours >= 24 && var.stream.retention_period_hours <= 8760
    error_message = "stream.retention_period_hours must be 24-8760."
  }
}

variable "processor" {
  description = "The Kinesis processor and its ESM."
  type = object({
    timeout_seconds            = number
    memory_mb                  = number
    reserved_concurrency       = optional(number)
    log_retention_days         = number
    expected_record_latency_ms = number
    concurrency                = optional(number, 16)
    deadline_margin_ms         = optional(number, 5000)
    environment                = optional(map(string), {})
    esm = object({
      batch_size                         = number
      maximum_batching_window_in_seconds = number
      parallelization_factor             = number
      starting_position                  = string
      maximum_retry_attempts             = number
      maximum_record_age_in_seconds      = number
      bisect_batch_on_function_error     = bool
      report_batch_item_failures         = bool
      enhanced_fan_out                   = bool
      on_failure_destination             = bool
    })
  })

  validation {
    condition     = var.processor.timeout_seconds >= 1 && var.processor.timeout_seconds <= 900
    error_message = "processor.timeout_seconds must be 1-900."
  }

  validation {
    condition     = var.processor.memory_mb >= 128 && var.processor.memory_mb <= 10240
    error_message = "processor.memory_mb must be 128-10240."
  }

  validation {
    condition     = var.processor.esm.parallelization_factor >= 1 && var.processor.esm.parallelization_factor <= 10
    error_message = "processor.esm.parallelization_factor must be 1-10 (§1.2)."
  }

  validation {
    condition     = var.processor.esm.maximum_retry_attempts >= -1 && var.processor.esm.maximum_retry_attempts <= 10000
    error_message = "processor.esm.maximum_retry_attempts must be -1-10000 (§1.3)."
  }

  validation {
    condition     = var.processor.esm.maximum_record_age_in_seconds == -1 || (var.processor.esm.maximum_record_age_in_seconds >= 60 && var.processor.esm.maximum_record_age_in_seconds <= 604800)
    error_message = "processor.esm.maximum_record_age_in_seconds must be -1 or 60-604800 (§1.3)."
  }

  validation {
    condition     = contains(["TRIM_HORIZON", "LATEST"], var.processor.esm.starting_position)
    error_message = "processor.esm.starting_position must be TRIM_HORIZON or LATEST."
  }

  validation {
    condition     = var.processor.concurrency >= 1 && var.processor.concurrency <= 256
    error_message = "processor.concurrency must be 1-256."
  }

  validation {
    condition     = var.processor.deadline_margin_ms >= 0 && var.processor.deadline_margin_ms <= 900000
    error_message = "processor.deadline_margin_ms must be 0-900000."
  }

  validation {
    condition     = length(setintersection(keys(var.processor.environment), ["DEADLINE_MARGIN_MS", "PROCESSOR_CONCURRENCY", "WORKER_CONCURRENCY", "REDRIVE_CONCURRENCY"])) == 0
    error_message = "processor.environment: a tuning variable has its typed setting (concurrency, deadline_margin_ms)."
  }
}

variable "tool_worker" {
  description = "The tool-worker, its ESM and its standard queue."
  type = object({
    timeout_seconds            = number
    memory_mb                  = number
    reserved_concurrency       = optional(number)
    log_retention_days         = number
    expected_record_latency_ms = number
    concurrency                = optional(number, 10)
    deadline_margin_ms         = optional(number, 5000)
    environment                = optional(map(string), {})
    esm = object({
      batch_size                         = number
      maximum_batching_window_in_seconds = number
      maximum_concurrency                = optional(number)
      report_batch_item_failures         = bool
    })
    queue = object({
      visibility_timeout_seconds    = number
      message_retention_seconds     = number
      max_receive_count             = number
      dlq_message_retention_seconds = number
    })
  })

  validation {
    condition     = var.tool_worker.timeout_seconds >= 1 && var.tool_worker.timeout_seconds <= 900
    error_message = "tool_worker.timeout_seconds must be 1-900."
  }

  validation {
    condition     = var.tool_worker.memory_mb >= 128 && var.tool_worker.memory_mb <= 10240
    error_message = "tool_worker.memory_mb must be 128-10240."
  }

  validation {
    condition     = var.tool_worker.esm.batch_size >= 1 && var.tool_worker.esm.batch_size <= 10000
    error_message = "tool_worker.esm.batch_size must be 1-10000."
  }

  validation {
    condition     = var.tool_worker.esm.batch_size <= 10 || var.tool_worker.esm.maximum_batching_window_in_seconds >= 1
    error_message = "tool_worker: a batch size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1)."
  }

  validation {
    condition     = var.tool_worker.esm.maximum_concurrency == null || try(var.tool_worker.esm.maximum_concurrency >= 2 && var.tool_worker.esm.maximum_concurrency <= 1000, false)
    error_message = "tool_worker.esm.maximum_concurrency must be null or 2-1000 (§2.2)."
  }

  validation {
    condition     = var.tool_worker.queue.visibility_timeout_seconds >= var.tool_worker.timeout_seconds
    error_message = "tool_worker: the queue's visibility timeout must be at least the function's timeout; Lambda refuses the mapping otherwise (§2.1)."
  }

  validation {
    condition     = var.tool_worker.queue.dlq_message_retention_seconds > var.tool_worker.queue.message_retention_seconds
    error_message = "tool_worker: the DLQ must keep messages longer than its source queue."
  }

  validation {
    condition     = var.tool_worker.concurrency >= 1 && var.tool_worker.concurrency <= 256
    error_message = "tool_worker.concurrency must be 1-256."
  }

  validation {
    condition     = var.tool_worker.deadline_margin_ms >= 0 && var.tool_worker.deadline_margin_ms <= 900000
    error_message = "tool_worker.deadline_margin_ms must be 0-900000."
  }

  validation {
    condition     = length(setintersection(keys(var.tool_worker.environment), ["DEADLINE_MARGIN_MS", "PROCESSOR_CONCURRENCY", "WORKER_CONCURRENCY", "REDRIVE_CONCURRENCY"])) == 0
    error_message = "tool_worker.environment: a tuning variable has its typed setting (concurrency, deadline_margin_ms)."
  }
}

variable "fifo_worker" {
  description = "The fifo-worker, its ESM and its FIFO queue."
  type = object({
    timeout_seconds            = number
    memory_mb                  = number
    reserved_concurrency       = optional(number)
    log_retention_days         = number
    expected_record_latency_ms = number
    concurrency                = optional(number, 10)
    deadline_margin_ms         = optional(number, 5000)
    environment                = optional(map(string), {})
    esm = object({
      batch_size                         = number
      maximum_batching_window_in_seconds = number
      maximum_concurrency                = optional(number)
      report_batch_item_failures         = bool
    })
    queue = object({
      visibility_timeout_seconds    = number
      message_retention_seconds     = number
      max_receive_count             = number
      dlq_message_retention_seconds = number
    })
  })

  validation {
    condition     = var.fifo_worker.timeout_seconds >= 1 && var.fifo_worker.timeout_seconds <= 900
    error_message = "fifo_worker.timeout_seconds must be 1-900."
  }

  validation {
    condition     = var.fifo_worker.memory_mb >= 128 && var.fifo_worker.memory_mb <= 10240
    error_message = "fifo_worker.memory_mb must be 128-10240."
  }

  validation {
    condition     = var.fifo_worker.esm.batch_size >= 1 && var.fifo_worker.esm.batch_size <= 10
    error_message = "fifo_worker.esm.batch_size must be 1-10 (FIFO, §3)."
  }

  validation {
    condition     = var.fifo_worker.esm.batch_size <= 10 || var.fifo_worker.esm.maximum_batching_window_in_seconds >= 1
    error_message = "fifo_worker: a batch size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1)."
  }

  validation {
    condition     = var.fifo_worker.esm.maximum_concurrency == null || try(var.fifo_worker.esm.maximum_concurrency >= 2 && var.fifo_worker.esm.maximum_concurrency <= 1000, false)
    error_message = "fifo_worker.esm.maximum_concurrency must be null or 2-1000 (§2.2)."
  }

  validation {
    condition     = var.fifo_worker.queue.visibility_timeout_seconds >= var.fifo_worker.timeout_seconds
    error_message = "fifo_worker: the queue's visibility timeout must be at least the function's timeout; Lambda refuses the mapping otherwise (§2.1)."
  }

  validation {
    condition     = var.fifo_worker.queue.dlq_message_retention_seconds > var.fifo_worker.queue.message_retention_seconds
    error_message = "fifo_worker: the DLQ must keep messages longer than its source queue."
  }

  validation {
    condition     = var.fifo_worker.concurrency >= 1 && var.fifo_worker.concurrency <= 256
    error_message = "fifo_worker.concurrency must be 1-256."
  }

  validation {
    condition     = var.fifo_worker.deadline_margin_ms >= 0 && var.fifo_worker.deadline_margin_ms <= 900000
    error_message = "fifo_worker.deadline_margin_ms must be 0-900000."
  }

  validation {
    condition     = length(setintersection(keys(var.fifo_worker.environment), ["DEADLINE_MARGIN_MS", "PROCESSOR_CONCURRENCY", "WORKER_CONCURRENCY", "REDRIVE_CONCURRENCY"])) == 0
    error_message = "fifo_worker.environment: a tuning variable has its typed setting (concurrency, deadline_margin_ms)."
  }
}

variable "dlq_redrive" {
  description = "dlq-redrive, its ESM and the Kinesis failure queue it consumes."
  type = object({
    timeout_seconds            = number
    memory_mb                  = number
    reserved_concurrency       = optional(number)
    log_retention_days         = number
    expected_record_latency_ms = number
    concurrency                = optional(number, 4)
    deadline_margin_ms         = optional(number, 10000)
    environment                = optional(map(string), {})
    esm = object({
      batch_size                         = number
      maximum_batching_window_in_seconds = number
      maximum_concurrency                = optional(number)
      report_batch_item_failures         = bool
    })
    queue = object({
      visibility_timeout_seconds    = number
      message_retention_seconds     = number
      max_receive_count             = number
      dlq_message_retention_seconds = number
    })
  })

  validation {
    condition     = var.dlq_redrive.timeout_seconds >= 1 && var.dlq_redrive.timeout_seconds <= 900
    error_message = "dlq_redrive.timeout_seconds must be 1-900."
  }

  validation {
    condition     = var.dlq_redrive.memory_mb >= 128 && var.dlq_redrive.memory_mb <= 10240
    error_message = "dlq_redrive.memory_mb must be 128-10240."
  }

  validation {
    condition     = var.dlq_redrive.esm.batch_size >= 1 && var.dlq_redrive.esm.batch_size <= 10000
    error_message = "dlq_redrive.esm.batch_size must be 1-10000."
  }

  validation {
    condition     = var.dlq_redrive.esm.batch_size <= 10 || var.dlq_redrive.esm.maximum_batching_window_in_seconds >= 1
    error_message = "dlq_redrive: a batch size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1)."
  }

  validation {
    condition     = var.dlq_redrive.esm.maximum_concurrency == null || try(var.dlq_redrive.esm.maximum_concurrency >= 2 && var.dlq_redrive.esm.maximum_concurrency <= 1000, false)
    error_message = "dlq_redrive.esm.maximum_concurrency must be null or 2-1000 (§2.2)."
  }

  validation {
    condition     = var.dlq_redrive.queue.visibility_timeout_seconds >= var.dlq_redrive.timeout_seconds
    error_message = "dlq_redrive: the queue's visibility timeout must be at least the function's timeout; Lambda refuses the mapping otherwise (§2.1)."
  }

  validation {
    condition     = var.dlq_redrive.queue.dlq_message_retention_seconds > var.dlq_redrive.queue.message_retention_seconds
    error_message = "dlq_redrive: the DLQ must keep messages longer than its source queue."
  }

  validation {
    condition     = var.dlq_redrive.concurrency >= 1 && var.dlq_redrive.concurrency <= 64
    error_message = "dlq_redrive.concurrency must be 1-64."
  }

  validation {
    condition     = var.dlq_redrive.deadline_margin_ms >= 0 && var.dlq_redrive.deadline_margin_ms <= 900000
    error_message = "dlq_redrive.deadline_margin_ms must be 0-900000."
  }

  validation {
    condition     = length(setintersection(keys(var.dlq_redrive.environment), ["DEADLINE_MARGIN_MS", "PROCESSOR_CONCURRENCY", "WORKER_CONCURRENCY", "REDRIVE_CONCURRENCY"])) == 0
    error_message = "dlq_redrive.environment: a tuning variable has its typed setting (concurrency, deadline_margin_ms)."
  }
}

variable "alarms" {
  description = "Alarm thresholds."
  type = object({
    iterator_age_ms                = number
    dlq_oldest_message_age_seconds = number
    duration_timeout_ratio         = number
  })
}

variable "notification_emails" {
  description = "Addresses that receive alarm notifications."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}

variable "manifest" {
  description = "dist/manifest.json, decoded."
  type = object({
    formatVersion = number
    artifacts = map(object({
      path      = string
      sizeBytes = number
      sha256    = string
      handler   = string
      runtime   = string
    }))
  })

  validation {
    condition     = var.manifest.formatVersion == 1 && alltrue([for n in ["processor", "tool-worker", "fifo-worker"] : contains(keys(var.manifest.artifacts), n)])
    error_message = "The manifest must be format 1 and hold processor, tool-worker and fifo-worker."
  }
}

variable "repository_root" {
  description = "The directory the manifest's paths (dist/<function>.zip) are relative to: the repository's root."
  type        = string
}

variable "quarantine_expiration_days" {
  description = "Days a quarantined record is kept: long enough to inspect and replay."
  type        = number
  default     = 90
}

variable "results_expiration_days" {
  description = "Days a large tool result is kept in S3."
  type        = number
  default     = 30
}
