variable "name" {
  description = "Stream name."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z0-9_.-]{1,128}$", var.name))
    error_message = "A stream name is 1-128 of [a-zA-Z0-9_.-]."
  }
}

variable "mode" {
  description = "ON_DEMAND or PROVISIONED."
  type        = string
  default     = "ON_DEMAND"

  validation {
    condition     = contains(["ON_DEMAND", "PROVISIONED"], var.mode)
    error_message = "mode must be ON_DEMAND or PROVISIONED."
  }
}

variable "shard_count" {
  description = "Shards, in PROVISIONED mode."
  type        = number
  default     = 1

  validation {
    condition     = var.shard_count >= 1 && var.shard_count <= 500 && floor(var.shard_count) == var.shard_count
    error_message = "shard_count must be a whole number from 1 to 500."
  }
}

variable "retention_period_hours" {
  description = "How long records stay readable: the bound on replay and on a blocked shard."
  type        = number
  default     = 24

  validation {
    condition     = var.retention_period_hours >= 24 && var.retention_period_hours <= 8760
    error_message = "retention_period_hours must be 24-8760 (docs/aws-semantics.md §7)."
  }
}

variable "kms_key_id" {
  description = "KMS key for encryption at rest."
  type        = string
  default     = "alias/aws/kinesis"
}

variable "shard_level_metrics" {
  description = "Enhanced shard-level metrics."
  type        = list(string)
  default     = ["IncomingRecords", "IteratorAgeMilliseconds", "ReadProvisionedThroughputExceeded", "WriteProvisionedThroughputExceeded"]

  validation {
    condition = alltrue([for m in var.shard_level_metrics : contains([
      "IncomingBytes", "IncomingRecords", "OutgoingBytes", "OutgoingRecords",
      "WriteProvisionedThroughputExceeded", "ReadProvisionedThroughputExceeded", "IteratorAgeMilliseconds",
    ], m)])
    error_message = "Unknown shard-level metric (docs/aws-semantics.md §7 lists the valid ones)."
  }
}

variable "enhanced_fan_out_consumer_name" {
  description = "Register an enhanced fan-out consumer with this name; null for shared throughput."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
