variable "name" {
  description = "Table name."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z0-9_.-]{3,255}$", var.name))
    error_message = "A table name is 3-255 of [a-zA-Z0-9_.-]."
  }
}

variable "hash_key" {
  description = "Partition key (a string attribute)."
  type        = string
}

variable "ttl_attribute" {
  description = "Attribute holding the expiry (epoch seconds); null for no TTL."
  type        = string
  default     = null
}

variable "kms_key_arn" {
  description = "Customer KMS key; null for the AWS-managed DynamoDB key."
  type        = string
  default     = null
}

variable "deletion_protection" {
  description = "Refuse DeleteTable."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags."
  type        = map(string)
  default     = {}
}
