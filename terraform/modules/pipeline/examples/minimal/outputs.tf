output "stream_name" {
  description = "The lifecycle stream."
  value       = module.pipeline.stream_name
}

output "queue_urls" {
  description = "Source queues and DLQs."
  value       = module.pipeline.queue_urls
}
