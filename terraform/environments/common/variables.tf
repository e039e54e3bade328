# The roots' variables are typed here and validated in modules/pipeline (AWS's ranges live there once).
variable "environment" {
  description = "Environment name (dev, prod...)."
  type        = string
}

variable "region" {
  description = "AWS region."
  type        = string
}

variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
}

variable "stream" {
  description = "The lifecycle stream."
  type = object({
    mode                   = string
    shard_count            = number
    retention_period_hours = number
  })
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

variable "repository_root" {
  description = "The repository's root, where the build left dist/manifest.json and the zips (deploy.yml downloads them there)."
  type        = string
  default     = "../../.."
}
