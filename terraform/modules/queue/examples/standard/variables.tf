variable "region" {
  description = "AWS region."
  type        = string
  default     = "eu-west-1"
}
