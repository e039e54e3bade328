# The roots' other variables; those that take the settings are in settings.generated.tf (types only:
# modules/pipeline validates them).
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
