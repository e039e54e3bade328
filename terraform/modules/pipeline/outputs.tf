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
  value = {
    tool_jobs           = module.tool_queue.url
    tool_jobs_dlq       = module.tool_queue.dlq_url
    session_jobs        = module.fifo_queue.url
    session_jobs_dlq    = module.fifo_queue.dlq_url
    stream_failures     = module.failure_queue.url
    stream_failures_dlq = module.failure_queue.dlq_url
  }
}

output "alarm_topic_arn" {
  description = "Subscribe here to be paged."
  value       = module.alarms.topic_arn
}
