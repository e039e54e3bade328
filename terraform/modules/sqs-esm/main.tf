# A worker's SQS event source mapping (docs/aws-semantics.md §2-3): partial batch responses by messageId,
# and a maximum concurrency so the mapping does not read messages it cannot invoke (§2.3 over-pull).
resource "aws_lambda_event_source_mapping" "this" {
  function_name                      = var.function_name
  event_source_arn                   = var.queue_arn
  batch_size                         = var.batch_size
  maximum_batching_window_in_seconds = var.fifo ? null : var.maximum_batching_window_in_seconds
  function_response_types            = var.report_batch_item_failures ? ["ReportBatchItemFailures"] : []

  dynamic "scaling_config" {
    for_each = var.maximum_concurrency == null ? [] : [var.maximum_concurrency]
    content {
      maximum_concurrency = scaling_config.value
    }
  }

  metrics_config {
    metrics = ["EventCount"]
  }
}
