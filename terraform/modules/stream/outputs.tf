output "name" {
  description = "Stream name."
  value       = aws_kinesis_stream.this.name
}

output "arn" {
  description = "Stream ARN (the on-failure record's streamArn)."
  value       = aws_kinesis_stream.this.arn
}

output "consumer_arn" {
  description = "Enhanced fan-out consumer ARN, or null."
  value       = one(aws_kinesis_stream_consumer.this[*].arn)
}

output "event_source_arn" {
  description = "What the processor's ESM reads: the consumer ARN with enhanced fan-out, else the stream ARN."
  value       = coalesce(one(aws_kinesis_stream_consumer.this[*].arn), aws_kinesis_stream.this.arn)
}
