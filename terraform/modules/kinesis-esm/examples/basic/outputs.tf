output "stream_name" {
  description = "The stream the mapping reads."
  value       = module.stream.name
}

output "failure_queue_url" {
  description = "Where on-failure records arrive."
  value       = module.failure_queue.url
}
