variable "name" {
  description = "Queue name without the .fifo suffix; the DLQ is <name>-dlq."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z0-9_-]{1,70}$", var.name))
    error_message = "A queue name is 1-70 of [a-zA-Z0-9_-] here (80 with -dlq.fifo)."
  }
}

variable "fifo" {
  description = "A FIFO queue (and FIFO DLQ)."
  type        = bool
  default     = false
}

variable "visibility_timeout_seconds" {
  description = "At least 6 x the consumer's timeout + batching window (docs/aws-semantics.md §2.1)."
  type        = number

  validation {
    condition     = var.visibility_timeout_seconds >= 0 && var.visibility_timeout_seconds <= 43200
    error_message = "visibility_timeout_seconds must be 0-43200."
  }
}

variable "message_retention_seconds" {
  description = "How long the source queue keeps a message."
  type        = number
  default     = 345600

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600
    error_message = "message_retention_seconds must be 60-1209600."
  }
}

variable "dlq_message_retention_seconds" {
  description = "How long the DLQ keeps a message: longer than the source, so nothing expires in the DLQ first."
  type        = number
  default     = 1209600

  validation {
    condition     = var.dlq_message_retention_seconds >= 60 && var.dlq_message_retention_seconds <= 1209600
    error_message = "dlq_message_retention_seconds must be 60-1209600."
  }
}

variable "max_receive_count" {
  description = "Receives before SQS moves a message to the DLQ (>= 5 recommended, docs/aws-semantics.md §2.3)."
  type        = number
  default     = 5

  validation {
    condition     = var.max_receive_count >= 1 && var.max_receive_count <= 1000
    error_message = "max_receive_count must be 1-1000."
  }
}

variable "kms_master_key_id" {
  description = "Customer KMS key; null for SQS-managed encryption (SSE-SQS)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
