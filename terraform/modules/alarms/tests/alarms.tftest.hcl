# The alarm topic's encryption (run by `npm run tf:check` with a mock AWS provider: nothing is created).
# CloudWatch alarms cannot publish to a topic encrypted with the AWS-managed alias/aws/sns key, whose
# policy does not let cloudwatch.amazonaws.com use it: the topic must use the module's own key, and that
# key's policy must let CloudWatch encrypt and decrypt.
mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = {
      account_id = "123456789012"
    }
  }
  mock_data "aws_partition" {
    defaults = {
      partition = "aws"
    }
  }
  # The provider validates ARNs, so the mocked ones look like AWS's.
  mock_resource "aws_sns_topic" {
    defaults = {
      arn = "arn:aws:sns:eu-west-1:123456789012:mcp-dev-alarms"
    }
  }
  mock_resource "aws_kms_key" {
    defaults = {
      arn = "arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000"
    }
  }
}

variables {
  name_prefix                    = "mcp-dev"
  region                         = "eu-west-1"
  runbook_url                    = "https://github.com/example/repo/blob/0123abc/docs/operations.md"
  iterator_age_ms                = 600000
  dlq_oldest_message_age_seconds = 3600
  duration_timeout_ratio         = 0.8
  stream_consumer = {
    function_name = "mcp-dev-processor"
    esm_uuid      = "00000000-0000-0000-0000-000000000000"
  }
  functions = {
    processor = { name = "mcp-dev-processor", timeout_seconds = 60 }
  }
  source_queues = {
    "tool-jobs" = { name = "mcp-dev-tool-jobs", max_age_seconds = 360 }
  }
  dead_letter_queues = {
    "tool-jobs" = "mcp-dev-tool-jobs-dlq"
  }
}

run "the_alarm_topic_uses_a_key_cloudwatch_may_use" {
  # apply against the mock provider: the topic's key is the (mocked) ARN of the module's own key.
  command = apply

  assert {
    condition     = aws_sns_topic.alarms.kms_master_key_id != "alias/aws/sns" && aws_sns_topic.alarms.kms_master_key_id == aws_kms_key.alarms.arn
    error_message = "The alarm topic must be encrypted with the module's customer-managed key, not alias/aws/sns."
  }

  assert {
    condition = anytrue([
      for s in jsondecode(aws_kms_key.alarms.policy).Statement :
      s.Effect == "Allow" && try(s.Principal.Service, "") == "cloudwatch.amazonaws.com" && contains(flatten([s.Action]), "kms:Decrypt") && contains(flatten([s.Action]), "kms:GenerateDataKey*")
    ])
    error_message = "The key policy must let cloudwatch.amazonaws.com use kms:Decrypt and kms:GenerateDataKey*."
  }

  # In one account, another environment's alarm (mcp-prod-*) must not publish to this topic.
  assert {
    condition = alltrue([
      for s in jsondecode(aws_kms_key.alarms.policy).Statement :
      try(s.Condition.ArnLike["aws:SourceArn"], "") == "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:mcp-dev-*"
      if try(s.Principal.Service, "") == "cloudwatch.amazonaws.com"
    ])
    error_message = "CloudWatch may use the key for this environment's alarms only (aws:SourceArn alarm:<name_prefix>-*)."
  }

  assert {
    condition     = aws_kms_key.alarms.enable_key_rotation
    error_message = "The key rotates."
  }

  assert {
    condition     = alltrue([for a in aws_cloudwatch_metric_alarm.errors : a.alarm_actions == toset([aws_sns_topic.alarms.arn])])
    error_message = "Every alarm notifies the topic."
  }
}

run "every_alarm_says_what_to_run_and_where_to_read_on" {
  command = plan

  assert {
    condition = alltrue([
      for d in concat(
        [aws_cloudwatch_metric_alarm.iterator_age.alarm_description, aws_cloudwatch_metric_alarm.dropped_events.alarm_description, aws_cloudwatch_metric_alarm.destination_delivered.alarm_description, aws_cloudwatch_metric_alarm.records_lost.alarm_description],
        [for a in aws_cloudwatch_metric_alarm.dlq_visible : a.alarm_description],
        [for a in aws_cloudwatch_metric_alarm.dlq_age : a.alarm_description],
        [for a in aws_cloudwatch_metric_alarm.queue_age : a.alarm_description],
        [for a in aws_cloudwatch_metric_alarm.errors : a.alarm_description],
        [for a in aws_cloudwatch_metric_alarm.throttles : a.alarm_description],
        [for a in aws_cloudwatch_metric_alarm.duration : a.alarm_description],
      ) :
      strcontains(d, "Run: AWS_REGION=eu-west-1 npm run recover -- ") && strcontains(d, "--prefix mcp-dev. Runbook: https://github.com/example/repo/blob/0123abc/docs/operations.md#") && length(d) <= 1024
    ])
    error_message = "Every alarm's description names the command to run (region and prefix included) and links to its section of the runbook, within CloudWatch's 1024 characters."
  }
}

run "a_runbook_link_with_an_anchor_or_a_space_is_refused" {
  command = plan

  variables {
    runbook_url = "docs/operations.md#alarms"
  }

  expect_failures = [var.runbook_url]
}
