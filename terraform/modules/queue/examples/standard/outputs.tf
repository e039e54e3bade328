output "queue_url" {
  description = "The source queue."
  value       = module.jobs.url
}

output "dlq_url" {
  description = "Its dead-letter queue."
  value       = module.jobs.dlq_url
}
