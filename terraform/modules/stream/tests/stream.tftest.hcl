# Valid and invalid inputs of the lifecycle stream (run by `npm run tf:check` with a mock AWS provider:
# nothing is created). Each refused value names the variable whose validation refuses it.
mock_provider "aws" {}

variables {
  name = "mcp-dev-events"
}

run "on_demand_with_an_enhanced_fan_out_consumer" {
  command = plan

  variables {
    mode                           = "ON_DEMAND"
    enhanced_fan_out_consumer_name = "mcp-dev-processor"
  }

  assert {
    condition     = aws_kinesis_stream.this.stream_mode_details[0].stream_mode == "ON_DEMAND"
    error_message = "The stream's mode comes from var.mode."
  }

  assert {
    condition     = length(aws_kinesis_stream_consumer.this) == 1 && aws_kinesis_stream_consumer.this[0].name == "mcp-dev-processor"
    error_message = "enhanced_fan_out_consumer_name registers one consumer."
  }
}

run "provisioned_with_two_shards_and_no_consumer" {
  command = plan

  variables {
    mode        = "PROVISIONED"
    shard_count = 2
  }

  assert {
    condition     = aws_kinesis_stream.this.shard_count == 2 && length(aws_kinesis_stream_consumer.this) == 0
    error_message = "A provisioned stream has its shards and, without a consumer name, no consumer."
  }
}

# "retention_period_hours must be 24-8760 (docs/aws-semantics.md §7)."
run "a_retention_under_24_hours_is_refused" {
  command = plan

  variables {
    retention_period_hours = 23
  }

  expect_failures = [var.retention_period_hours]
}

# "shard_count must be a whole number from 1 to 500."
run "half_a_shard_is_refused" {
  command = plan

  variables {
    mode        = "PROVISIONED"
    shard_count = 1.5
  }

  expect_failures = [var.shard_count]
}

# "mode must be ON_DEMAND or PROVISIONED."
run "an_unknown_mode_is_refused" {
  command = plan

  variables {
    mode = "BURST"
  }

  expect_failures = [var.mode]
}

# "Unknown shard-level metric (docs/aws-semantics.md §7 lists the valid ones)."
run "all_shard_level_metrics_is_refused" {
  command = plan

  variables {
    shard_level_metrics = ["ALL"]
  }

  expect_failures = [var.shard_level_metrics]
}
