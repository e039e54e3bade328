variable "name" {
  description = "Function name (also its role and log group)."
  type        = string

  validation {
    condition     = can(regex("^[a-zA-Z0-9_-]{1,64}$", var.name))
    error_message = "A function name is 1-64 of [a-zA-Z0-9_-]."
  }
}

variable "artifact" {
  description = "The function's entry in dist/manifest.json, with path made absolute by the caller."
  type = object({
    path    = string
    sha256  = string
    handler = string
    runtime = string
  })

  validation {
    condition     = var.artifact.runtime == "nodejs22.x"
    error_message = "The bundles are built for nodejs22.x."
  }
}

variable "timeout_seconds" {
  description = "Lambda timeout."
  type        = number

  validation {
    condition     = var.timeout_seconds >= 1 && var.timeout_seconds <= 900
    error_message = "timeout_seconds must be 1-900."
  }
}

variable "memory_mb" {
  description = "Memory (and so CPU) of the function."
  type        = number

  validation {
    condition     = var.memory_mb >= 128 && var.memory_mb <= 10240
    error_message = "memory_mb must be 128-10240."
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrency; null leaves the function unreserved."
  type        = number
  default     = null

  validation {
    condition     = var.reserved_concurrency == null || try(var.reserved_concurrency >= 0, false)
    error_message = "reserved_concurrency must be null or >= 0."
  }
}

variable "log_retention_days" {
  description = "CloudWatch Logs retention."
  type        = number

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be a value CloudWatch Logs accepts."
  }
}

variable "log_kms_key_arn" {
  description = "KMS key for the log group; null for CloudWatch's own encryption."
  type        = string
  default     = null
}

variable "environment" {
  description = "Environment variables (resource names and tuning; no secrets)."
  type        = map(string)
  default     = {}
}

variable "policy_statements" {
  description = "What the function may do, on named resources."
  type = list(object({
    sid       = string
    actions   = list(string)
    resources = list(string)
  }))

  validation {
    condition     = alltrue([for s in var.policy_statements : !contains(s.actions, "*") && !contains(s.resources, "*")])
    error_message = "No wildcard action or resource in a function's statements: name them."
  }
}

variable "role_path" {
  description = "IAM path of the function's role (the deploy role may manage roles under its environment's path only)."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([A-Za-z0-9+=,.@_-]+/)*$", var.role_path)) && length(var.role_path) <= 512
    error_message = "role_path must start and end with \"/\" (IAM paths: up to 512 characters)."
  }
}

variable "permissions_boundary_arn" {
  description = "ARN of the managed policy set as the role's permissions boundary; null for none."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:[a-z-]+:iam::[0-9]{12}:policy/", var.permissions_boundary_arn))
    error_message = "permissions_boundary_arn must be an IAM policy ARN."
  }
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
