output "region" {
  description = "The environment's region: AWS_REGION for `npm run recover` (docs/operations.md)."
  value       = var.region
}

output "stream_name" {
  description = "The lifecycle stream."
  value       = module.pipeline.stream_name
}

output "tool_calls_table" {
  description = "The tool-calls table."
  value       = module.pipeline.tool_calls_table
}

output "quarantine_bucket" {
  description = "The quarantine bucket."
  value       = module.pipeline.quarantine_bucket
}

output "queue_urls" {
  description = "Source queues and DLQs."
  value       = module.pipeline.queue_urls
}

output "alarm_topic_arn" {
  description = "Subscribe here to be paged."
  value       = module.pipeline.alarm_topic_arn
}

output "resource_names" {
  description = "The name of every resource of the environment."
  value       = module.pipeline.resource_names
}
