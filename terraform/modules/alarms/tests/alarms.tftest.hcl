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

  assert {
    condition     = aws_kms_key.alarms.enable_key_rotation
    error_message = "The key rotates."
  }

  assert {
    condition     = alltrue([for a in aws_cloudwatch_metric_alarm.errors : a.alarm_actions == toset([aws_sns_topic.alarms.arn])])
    error_message = "Every alarm notifies the topic."
  }
}
