locals {
  suffix   = var.fifo ? ".fifo" : ""
  dlq_name = "${var.name}-dlq${local.suffix}"
  # Declared once for Terraform and the local stack (packages/settings' QUEUE_ATTRIBUTES).
  attributes = jsondecode(file("${path.module}/attributes.json"))
}

# Where messages go after max_receive_count receives, and where workers send poison messages at once.
resource "aws_sqs_queue" "dlq" {
  name                      = local.dlq_name
  fifo_queue                = var.fifo
  message_retention_seconds = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled   = var.kms_master_key_id == null ? true : null
  kms_master_key_id         = var.kms_master_key_id
  tags                      = var.tags
}

resource "aws_sqs_queue" "this" {
  name                       = "${var.name}${local.suffix}"
  fifo_queue                 = var.fifo
  visibility_timeout_seconds = var.visibility_timeout_seconds
  message_retention_seconds  = var.message_retention_seconds
  receive_wait_time_seconds  = local.attributes.receive_wait_time_seconds
  sqs_managed_sse_enabled    = var.kms_master_key_id == null ? true : null
  kms_master_key_id          = var.kms_master_key_id
  # FIFO: per-group throughput, deduplication per group (the group is the session).
  deduplication_scope   = var.fifo ? local.attributes.fifo.deduplication_scope : null
  fifo_throughput_limit = var.fifo ? local.attributes.fifo.fifo_throughput_limit : null
  tags                  = var.tags
}

# Standalone resources get drift detection; the inline arguments do not (docs/aws-semantics.md §7).
resource "aws_sqs_queue_redrive_policy" "this" {
  queue_url = aws_sqs_queue.this.id
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq.arn
    maxReceiveCount     = var.max_receive_count
  })
}

# Only this queue may use the DLQ, so a redrive (StartMessageMoveTask) can only go back here.
# The source queue is no queue's DLQ: SQS checks no IAM permission on the queue a RedrivePolicy names, only
# that queue's redrive allow policy (allowAll when unset), so without this any queue of the account (another
# environment's, whose deploy role sets its own queues' attributes) could dead-letter jobs into it.
resource "aws_sqs_queue_redrive_allow_policy" "this" {
  queue_url = aws_sqs_queue.this.id
  redrive_allow_policy = jsonencode({
    redrivePermission = "denyAll"
  })
}

resource "aws_sqs_queue_redrive_allow_policy" "dlq" {
  queue_url = aws_sqs_queue.dlq.id
  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [aws_sqs_queue.this.arn]
  })
}
