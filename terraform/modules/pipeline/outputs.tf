output "stream_name" {
  description = "The lifecycle stream."
  value       = module.stream.name
}

output "tool_calls_table" {
  description = "The tool-calls table."
  value       = module.tool_calls_table.name
}

output "quarantine_bucket" {
  description = "The quarantine bucket."
  value       = module.quarantine_bucket.name
}

output "queue_urls" {
  description = "Source queues and DLQs."
  value = merge(
    { for key, q in module.queue : key => q.url },
    { for key, q in module.queue : "${key}_dlq" => q.dlq_url },
  )
}

output "alarm_topic_arn" {
  description = "Subscribe here to be paged."
  value       = module.alarms.topic_arn
}
