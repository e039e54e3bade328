variable "region" {
  description = "Region of the state bucket and the environments."
  type        = string
}

variable "github_repository" {
  description = "owner/name of the repository whose workflows may assume the roles."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", var.github_repository))
    error_message = "github_repository must be owner/name."
  }
}

variable "environments" {
  description = "Environments that get a deploy role and a plan role."
  type        = list(string)
  default     = ["dev", "prod"]
}

variable "state_bucket_prefix" {
  description = "The state bucket is <prefix>-<account id>."
  type        = string
  default     = "mcp-terraform-state"
}
