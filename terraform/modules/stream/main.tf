resource "aws_kinesis_stream" "this" {
  name             = var.name
  shard_count      = var.mode == "PROVISIONED" ? var.shard_count : null
  retention_period = var.retention_period_hours
  encryption_type  = "KMS"
  kms_key_id       = var.kms_key_id

  # Explicit list: "ALL" should not be used (docs/aws-semantics.md §7). IteratorAgeMilliseconds per shard
  # shows which shard a stuck record blocks.
  shard_level_metrics = var.shard_level_metrics

  stream_mode_details {
    stream_mode = var.mode
  }

  tags = var.tags
}

# Enhanced fan-out: the processor gets its own 2 MB/s per shard and HTTP/2 push; its ESM then reads
# through the consumer ARN (docs/aws-semantics.md §1.1).
resource "aws_kinesis_stream_consumer" "this" {
  count = var.enhanced_fan_out_consumer_name == null ? 0 : 1

  name       = var.enhanced_fan_out_consumer_name
  stream_arn = aws_kinesis_stream.this.arn
}
