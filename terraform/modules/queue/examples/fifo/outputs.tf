output "queue_url" {
  description = "The FIFO queue."
  value       = module.session_jobs.url
}

output "dlq_url" {
  description = "Its dead-letter queue."
  value       = module.session_jobs.dlq_url
}
