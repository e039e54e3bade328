# Valid and invalid inputs of the SQS event source mapping (run by `npm run tf:check` with a mock AWS
# provider: nothing is created). Each refused value names the variable whose validation refuses it.
mock_provider "aws" {}

variables {
  function_name = "arn:aws:lambda:eu-west-1:123456789012:function:mcp-dev-tool-worker"
  queue_arn     = "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-tool-jobs"
}

run "standard_queue_with_partial_batch_responses_and_maximum_concurrency" {
  command = plan

  variables {
    batch_size          = 10
    maximum_concurrency = 10
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.function_response_types == toset(["ReportBatchItemFailures"])
    error_message = "Partial batch responses must be on by default (docs/aws-semantics.md §2.3)."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.scaling_config[0].maximum_concurrency == 10
    error_message = "maximum_concurrency must reach ScalingConfig."
  }
}

run "no_maximum_concurrency_means_no_scaling_config" {
  command = plan

  assert {
    condition     = length(aws_lambda_event_source_mapping.this.scaling_config) == 0
    error_message = "A null maximum_concurrency must leave ScalingConfig unset."
  }
}

run "a_batch_over_10_with_a_window" {
  command = plan

  variables {
    batch_size                         = 100
    maximum_batching_window_in_seconds = 5
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.maximum_batching_window_in_seconds == 5
    error_message = "The batching window must reach the mapping."
  }
}

# "maximum_concurrency must be null or 2-1000." (Lambda's range, §2.2)
run "maximum_concurrency_of_1_is_refused" {
  command = plan

  variables {
    maximum_concurrency = 1
  }

  expect_failures = [var.maximum_concurrency]
}

run "maximum_concurrency_over_1000_is_refused" {
  command = plan

  variables {
    maximum_concurrency = 1001
  }

  expect_failures = [var.maximum_concurrency]
}

# "batch_size must be 1-10000 (10 for FIFO)."
run "batch_size_0_is_refused" {
  command = plan

  variables {
    batch_size = 0
  }

  expect_failures = [var.batch_size]
}

# "maximum_batching_window_in_seconds must be 0-300."
run "a_window_over_300_seconds_is_refused" {
  command = plan

  variables {
    maximum_batching_window_in_seconds = 301
  }

  expect_failures = [var.maximum_batching_window_in_seconds]
}

# "batch_size over 10 needs maximum_batching_window_in_seconds >= 1 (§2.1)." Lambda refuses such a mapping.
run "a_batch_over_10_without_a_window_is_refused" {
  command = plan

  variables {
    batch_size = 100
  }

  expect_failures = [var.batch_size]
}

# "a FIFO queue's mapping takes at most 10 messages a batch (§3)." Lambda refuses more.
run "a_fifo_batch_over_10_is_refused" {
  command = plan

  variables {
    fifo                               = true
    batch_size                         = 20
    maximum_batching_window_in_seconds = 1
  }

  expect_failures = [var.batch_size]
}

run "a_fifo_batch_of_10_passes_without_a_window" {
  command = plan

  variables {
    fifo                               = true
    batch_size                         = 10
    maximum_batching_window_in_seconds = 5
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.batch_size == 10 && aws_lambda_event_source_mapping.this.maximum_batching_window_in_seconds == null
    error_message = "A FIFO mapping takes its batch size and no batching window (§3)."
  }
}
