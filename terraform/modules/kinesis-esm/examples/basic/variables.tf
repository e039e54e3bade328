variable "region" {
  description = "AWS region."
  type        = string
  default     = "eu-west-1"
}

variable "function_name" {
  description = "Name or ARN of the function the mapping invokes (it must return partial batch responses)."
  type        = string
}
