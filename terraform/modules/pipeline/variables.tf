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
