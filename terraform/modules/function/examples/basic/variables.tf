variable "region" {
  description = "AWS region."
  type        = string
  default     = "eu-west-1"
}

variable "repository_root" {
  description = "The directory holding dist/ after `npm run build`: the repository's root."
  type        = string
  default     = "../../../../.."
}
