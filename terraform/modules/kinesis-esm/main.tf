# The processor's Kinesis event source mapping with every guard of docs/aws-semantics.md §1 on: partial
# batch responses, bisect on error, bounded retries and record age, and an on-failure destination,
# so a poison record never blocks its shard for the stream's whole retention.
resource "aws_lambda_event_source_mapping" "this" {
  function_name                      = var.function_name
  event_source_arn                   = var.event_source_arn
  starting_position                  = var.starting_position
  batch_size                         = var.batch_size
  maximum_batching_window_in_seconds = var.maximum_batching_window_in_seconds
  parallelization_factor             = var.parallelization_factor
  maximum_retry_attempts             = var.maximum_retry_attempts
  maximum_record_age_in_seconds      = var.maximum_record_age_in_seconds
  bisect_batch_on_function_error     = var.bisect_batch_on_function_error
  function_response_types            = var.report_batch_item_failures ? ["ReportBatchItemFailures"] : []

  dynamic "destination_config" {
    for_each = var.on_failure_destination_arn == null ? [] : [var.on_failure_destination_arn]
    content {
      on_failure {
        destination_arn = destination_config.value
      }
    }
  }

  # DroppedEventCount and OnFailureDestinationDeliveredEventCount, which the alarms watch (§6).
  metrics_config {
    metrics = ["EventCount"]
  }
}
