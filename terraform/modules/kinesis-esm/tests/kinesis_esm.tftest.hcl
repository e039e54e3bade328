# Valid and invalid inputs of the processor's Kinesis event source mapping (run by `npm run tf:check`
# with a mock AWS provider: nothing is created). Each refused value names the variable that refuses it.
mock_provider "aws" {}

variables {
  function_name    = "arn:aws:lambda:eu-west-1:123456789012:function:mcp-dev-processor"
  event_source_arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/mcp-dev-events"
}

run "every_guard_on_with_an_on_failure_destination" {
  command = plan

  variables {
    on_failure_destination_arn = "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-stream-failures"
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.destination_config[0].on_failure[0].destination_arn == "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-stream-failures"
    error_message = "On-failure records must go to the destination (docs/aws-semantics.md §1.6)."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.bisect_batch_on_function_error && aws_lambda_event_source_mapping.this.maximum_retry_attempts == 3 && aws_lambda_event_source_mapping.this.maximum_record_age_in_seconds == 3600
    error_message = "Bisect, bounded retries and bounded record age are the defaults (§1.3)."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.function_response_types == toset(["ReportBatchItemFailures"])
    error_message = "Partial batch responses must be on by default (§1.4)."
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.metrics_config[0].metrics == toset(["EventCount"])
    error_message = "The EventCount metrics feed the dropped-events and failure-queue alarms (§6)."
  }
}

run "without_a_destination_no_destination_config" {
  command = plan

  assert {
    condition     = length(aws_lambda_event_source_mapping.this.destination_config) == 0
    error_message = "A null on_failure_destination_arn must leave DestinationConfig unset."
  }
}

# -1 (infinite) is in AWS's range (docs/aws-semantics.md §1.3) and in the settings schema's: the module
# passes it on, and lint:config reports it (infinite-retries) before an apply.
run "infinite_retries_are_passed_on" {
  command = plan

  variables {
    maximum_retry_attempts = -1
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.maximum_retry_attempts == -1
    error_message = "maximum_retry_attempts = -1 must reach the mapping."
  }
}

# "maximum_retry_attempts must be -1-10000 (§1.3)."
run "retries_below_minus_one_are_refused" {
  command = plan

  variables {
    maximum_retry_attempts = -2
  }

  expect_failures = [var.maximum_retry_attempts]
}

# -1 (infinite record age) is in AWS's range (docs/aws-semantics.md §1.3, §7) and in the settings schema's
# and the pipeline module's: the module passes it on, and lint:config reports it (infinite-record-age).
run "infinite_record_age_is_passed_on" {
  command = plan

  variables {
    maximum_record_age_in_seconds = -1
  }

  assert {
    condition     = aws_lambda_event_source_mapping.this.maximum_record_age_in_seconds == -1
    error_message = "maximum_record_age_in_seconds = -1 must reach the mapping."
  }
}

# "maximum_record_age_in_seconds must be -1 or 60-604800 (§1.3)."
run "a_record_age_under_60_is_refused" {
  command = plan

  variables {
    maximum_record_age_in_seconds = 59
  }

  expect_failures = [var.maximum_record_age_in_seconds]
}

# "parallelization_factor must be 1-10."
run "parallelization_factor_11_is_refused" {
  command = plan

  variables {
    parallelization_factor = 11
  }

  expect_failures = [var.parallelization_factor]
}

# "starting_position must be TRIM_HORIZON or LATEST."
run "at_timestamp_is_refused" {
  command = plan

  variables {
    starting_position = "AT_TIMESTAMP"
  }

  expect_failures = [var.starting_position]
}

# -2 is neither infinite nor an age.
run "a_record_age_of_minus_two_is_refused" {
  command = plan

  variables {
    maximum_record_age_in_seconds = -2
  }

  expect_failures = [var.maximum_record_age_in_seconds]
}
