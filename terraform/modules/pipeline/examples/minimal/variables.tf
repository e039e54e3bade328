# The module's required inputs, declared here without repeating their types: the module types and validates
# them (terraform/modules/pipeline/variables.tf, and its README's inputs table).

variable "environment" {
  description = "Environment name (dev, prod...)."
  type        = string
}

variable "region" {
  description = "AWS region."
  type        = string
}

variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
}

variable "stream" {
  description = "The lifecycle stream (see the module's `stream` input)."
  type        = any
}

variable "processor" {
  description = "The processor and its Kinesis ESM (see the module's `processor` input)."
  type        = any
}

variable "tool_worker" {
  description = "The tool-worker, its ESM and its standard queue (see the module's `tool_worker` input)."
  type        = any
}

variable "fifo_worker" {
  description = "The fifo-worker, its ESM and its FIFO queue (see the module's `fifo_worker` input)."
  type        = any
}

variable "dlq_redrive" {
  description = "dlq-redrive, its ESM and the Kinesis failure queue (see the module's `dlq_redrive` input)."
  type        = any
}

variable "alarms" {
  description = "Alarm thresholds (see the module's `alarms` input)."
  type        = any
}

variable "repository_root" {
  description = "The directory holding dist/ after `npm run build`: the repository's root."
  type        = string
  default     = "../../../../.."
}
