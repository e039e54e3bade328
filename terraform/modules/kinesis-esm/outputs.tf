output "uuid" {
  description = "The mapping's UUID: the dimension of its EventCount metrics."
  value       = aws_lambda_event_source_mapping.this.uuid
}
