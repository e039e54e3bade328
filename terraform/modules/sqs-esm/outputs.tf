output "uuid" {
  description = "The mapping's UUID."
  value       = aws_lambda_event_source_mapping.this.uuid
}
