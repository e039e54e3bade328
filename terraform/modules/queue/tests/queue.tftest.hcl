# Valid and invalid inputs of a source queue with its DLQ (run by `npm run tf:check` with a mock AWS
# provider: nothing is created). Each refused value names the variable whose validation refuses it.
mock_provider "aws" {
  # The provider validates ARNs, so the mocked ones look like AWS's.
  mock_resource "aws_sqs_queue" {
    defaults = {
      arn = "arn:aws:sqs:eu-west-1:123456789012:mcp-dev-session-jobs"
      url = "https://sqs.eu-west-1.amazonaws.com/123456789012/mcp-dev-session-jobs"
    }
  }
}

variables {
  name                       = "mcp-dev-session-jobs"
  visibility_timeout_seconds = 180
}

run "a_fifo_queue_and_its_fifo_dlq" {
  # apply against the mock provider: the redrive policy needs the DLQ's (mocked) ARN.
  command = apply

  variables {
    fifo              = true
    max_receive_count = 5
  }

  assert {
    condition     = aws_sqs_queue.this.name == "mcp-dev-session-jobs.fifo" && aws_sqs_queue.dlq.name == "mcp-dev-session-jobs-dlq.fifo"
    error_message = "FIFO queues and their DLQs end in .fifo."
  }

  assert {
    condition     = jsondecode(aws_sqs_queue_redrive_policy.this.redrive_policy) == { deadLetterTargetArn = aws_sqs_queue.dlq.arn, maxReceiveCount = 5 }
    error_message = "The source queue must redrive to its DLQ after max_receive_count receives."
  }

  assert {
    condition     = jsondecode(aws_sqs_queue_redrive_allow_policy.dlq.redrive_allow_policy).sourceQueueArns == [aws_sqs_queue.this.arn]
    error_message = "Only the source queue may use the DLQ."
  }

  assert {
    condition     = jsondecode(aws_sqs_queue_redrive_allow_policy.this.redrive_allow_policy).redrivePermission == "denyAll"
    error_message = "No queue may use the source queue as its DLQ (another environment's dead letters would become its jobs)."
  }
}

# "visibility_timeout_seconds must be 0-43200."
run "a_visibility_timeout_over_12_hours_is_refused" {
  command = plan

  variables {
    visibility_timeout_seconds = 43201
  }

  expect_failures = [var.visibility_timeout_seconds]
}

# "message_retention_seconds must be 60-1209600."
run "a_retention_under_a_minute_is_refused" {
  command = plan

  variables {
    message_retention_seconds = 59
  }

  expect_failures = [var.message_retention_seconds]
}

# "max_receive_count must be 1-1000."
run "max_receive_count_0_is_refused" {
  command = plan

  variables {
    max_receive_count = 0
  }

  expect_failures = [var.max_receive_count]
}

# "A queue name is 1-70 of [a-zA-Z0-9_-] here (80 with -dlq.fifo)."
run "a_name_with_a_dot_is_refused" {
  command = plan

  variables {
    name = "jobs.fifo"
  }

  expect_failures = [var.name]
}
