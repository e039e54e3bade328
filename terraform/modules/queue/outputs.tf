output "name" {
  description = "Source queue name."
  value       = aws_sqs_queue.this.name
}

output "url" {
  description = "Source queue URL."
  value       = aws_sqs_queue.this.id
}

output "arn" {
  description = "Source queue ARN."
  value       = aws_sqs_queue.this.arn
}

output "dlq_name" {
  description = "DLQ name."
  value       = aws_sqs_queue.dlq.name
}

output "dlq_url" {
  description = "DLQ URL (the workers' DEAD_LETTER_QUEUE_URL)."
  value       = aws_sqs_queue.dlq.id
}

output "dlq_arn" {
  description = "DLQ ARN."
  value       = aws_sqs_queue.dlq.arn
}
