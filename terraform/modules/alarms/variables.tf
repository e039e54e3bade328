variable "name_prefix" {
  description = "Prefix of alarm, topic and dashboard names."
  type        = string
}

variable "region" {
  description = "Region of the dashboard's metrics, and the AWS_REGION of the commands the alarms name."
  type        = string
}

variable "runbook_url" {
  description = "Where on-call reads docs/operations.md (a link to it at the deployed commit, or its path): every alarm's description ends with the link to its section there, after the command to run."
  type        = string

  validation {
    condition     = length(var.runbook_url) > 0 && length(var.runbook_url) <= 300 && !can(regex("[\\s#]", var.runbook_url))
    error_message = "runbook_url must be 1-300 characters, without spaces or a #anchor (each alarm adds its own)."
  }
}

variable "notification_emails" {
  description = "Addresses subscribed to the alarm topic (each must confirm)."
  type        = list(string)
  default     = []
}

variable "metrics_namespace" {
  description = "Namespace of the functions' own EMF metrics (METRICS_NAMESPACE)."
  type        = string
  default     = "McpPipeline"
}

variable "stream_consumer" {
  description = "The processor and its Kinesis ESM."
  type = object({
    function_name = string
    esm_uuid      = string
  })
}

variable "functions" {
  description = "Every function, by short name: Errors, Throttles and Duration alarms each."
  type = map(object({
    name            = string
    timeout_seconds = number
  }))
}

variable "source_queues" {
  description = "Source queues by short name, with the oldest-message age that should page."
  type = map(object({
    name            = string
    max_age_seconds = number
  }))
}

variable "dead_letter_queues" {
  description = "Every DLQ by short name (queue name as value): visible-messages and age alarms each."
  type        = map(string)
}

variable "iterator_age_ms" {
  description = "Processor IteratorAge that pages."
  type        = number

  validation {
    condition     = var.iterator_age_ms >= 1000
    error_message = "iterator_age_ms must be at least 1000."
  }
}

variable "dlq_oldest_message_age_seconds" {
  description = "Age of the oldest DLQ message that pages."
  type        = number
}

variable "duration_timeout_ratio" {
  description = "Fraction of a function's timeout that its p99 Duration may reach."
  type        = number

  validation {
    condition     = var.duration_timeout_ratio > 0 && var.duration_timeout_ratio <= 1
    error_message = "duration_timeout_ratio must be in (0, 1]."
  }
}

variable "key_administrator_arns" {
  description = "Principals (role ARNs) that administer the alarm topic's key through its key policy: the environment's deploy role."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.key_administrator_arns : can(regex("^arn:[a-z-]+:iam::[0-9]{12}:role/", a))])
    error_message = "key_administrator_arns must be IAM role ARNs."
  }
}

variable "key_reader_arns" {
  description = "Principals (role ARNs) that read the key's configuration through its key policy: the environment's plan role."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.key_reader_arns : can(regex("^arn:[a-z-]+:iam::[0-9]{12}:role/", a))])
    error_message = "key_reader_arns must be IAM role ARNs."
  }
}

variable "tags" {
  description = "Tags."
  type        = map(string)
  default     = {}
}
