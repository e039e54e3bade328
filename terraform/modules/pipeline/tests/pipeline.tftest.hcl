# The whole pipeline planned with a mock AWS provider (run by `npm run tf:check`; nothing is created): the
# SQS consumers' for_each reaches every queue, function and mapping, and every name is the one
# resource-names.json declares (@mcp-pipeline/settings' resourceNames derives the same).
mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = {
      account_id = "123456789012"
    }
  }
  # The quarantine's break-glass role ARN is checked as arn:aws:iam::...
  mock_data "aws_partition" {
    defaults = {
      partition = "aws"
    }
  }
  # Policy documents are JSON where the provider checks them (a role's trust policy).
  mock_data "aws_iam_policy_document" {
    defaults = {
      json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
    }
  }
}

variables {
  environment = "test"
  region      = "eu-west-1"
  name_prefix = "mcp-test"
  stream = {
    mode                   = "PROVISIONED"
    shard_count            = 2
    retention_period_hours = 24
  }
  processor = {
    timeout_seconds            = 60
    memory_mb                  = 512
    reserved_concurrency       = null
    log_retention_days         = 14
    expected_record_latency_ms = 20
    esm = {
      batch_size                         = 100
      maximum_batching_window_in_seconds = 1
      parallelization_factor             = 2
      starting_position                  = "TRIM_HORIZON"
      maximum_retry_attempts             = 3
      maximum_record_age_in_seconds      = 3600
      bisect_batch_on_function_error     = true
      report_batch_item_failures         = true
      enhanced_fan_out                   = false
      on_failure_destination             = true
    }
  }
  tool_worker = {
    timeout_seconds            = 30
    memory_mb                  = 512
    reserved_concurrency       = 20
    log_retention_days         = 14
    expected_record_latency_ms = 2000
    esm = {
      batch_size                         = 10
      maximum_batching_window_in_seconds = 0
      maximum_concurrency                = 10
      report_batch_item_failures         = true
    }
    queue = {
      visibility_timeout_seconds    = 180
      message_retention_seconds     = 345600
      max_receive_count             = 5
      dlq_message_retention_seconds = 1209600
    }
  }
  fifo_worker = {
    timeout_seconds            = 30
    memory_mb                  = 512
    reserved_concurrency       = 10
    log_retention_days         = 14
    expected_record_latency_ms = 2000
    esm = {
      batch_size                         = 10
      maximum_batching_window_in_seconds = 0
      maximum_concurrency                = 5
      report_batch_item_failures         = true
    }
    queue = {
      visibility_timeout_seconds    = 180
      message_retention_seconds     = 345600
      max_receive_count             = 5
      dlq_message_retention_seconds = 1209600
    }
  }
  dlq_redrive = {
    timeout_seconds            = 60
    memory_mb                  = 256
    reserved_concurrency       = 5
    log_retention_days         = 14
    expected_record_latency_ms = 500
    esm = {
      batch_size                         = 10
      maximum_batching_window_in_seconds = 0
      maximum_concurrency                = 2
      report_batch_item_failures         = true
    }
    queue = {
      visibility_timeout_seconds    = 360
      message_retention_seconds     = 345600
      max_receive_count             = 5
      dlq_message_retention_seconds = 1209600
    }
  }
  alarms = {
    iterator_age_ms                = 600000
    dlq_oldest_message_age_seconds = 3600
    duration_timeout_ratio         = 0.8
  }
  repository_root = "/repository"
  manifest = {
    formatVersion = 1
    artifacts = {
      for name in ["processor", "tool-worker", "fifo-worker", "dlq-redrive"] : name => {
        path      = "dist/${name}.zip"
        sizeBytes = 1000
        sha256    = "47DEQpj8HBSbTVO5+8vqXqYl2vBbAlOMpwCa9gbGD6w="
        handler   = "index.handler"
        runtime   = "nodejs22.x"
      }
    }
  }
}

run "every_consumer_gets_its_queue_function_and_mapping_named_from_resource_names_json" {
  command = plan

  assert {
    condition = output.resource_names.queues == {
      tool_jobs       = { name = "mcp-test-tool-jobs", dlq_name = "mcp-test-tool-jobs-dlq" }
      session_jobs    = { name = "mcp-test-session-jobs.fifo", dlq_name = "mcp-test-session-jobs-dlq.fifo" }
      stream_failures = { name = "mcp-test-stream-failures", dlq_name = "mcp-test-stream-failures-dlq" }
    }
    error_message = "The queues must be tool_jobs, session_jobs (FIFO) and stream_failures, named <prefix>-<suffix>."
  }

  assert {
    condition = output.resource_names.functions == {
      processor   = "mcp-test-processor"
      tool_worker = "mcp-test-tool-worker"
      fifo_worker = "mcp-test-fifo-worker"
      dlq_redrive = "mcp-test-dlq-redrive"
    }
    error_message = "Every function must be deployed and named <prefix>-<suffix>."
  }

  assert {
    condition     = keys(module.sqs_consumer_esm) == ["dlq_redrive", "fifo_worker", "tool_worker"]
    error_message = "Every SQS consumer must get its event source mapping."
  }

  assert {
    condition     = output.resource_names.stream == "mcp-test-events" && output.resource_names.tool_calls_table == "mcp-test-tool-calls"
    error_message = "The stream and the tables are <prefix>-<suffix>."
  }
}

run "without_its_artifact_dlq_redrive_is_not_deployed_but_its_queue_is" {
  command = plan

  variables {
    manifest = {
      formatVersion = 1
      artifacts = {
        for name in ["processor", "tool-worker", "fifo-worker"] : name => {
          path      = "dist/${name}.zip"
          sizeBytes = 1000
          sha256    = "47DEQpj8HBSbTVO5+8vqXqYl2vBbAlOMpwCa9gbGD6w="
          handler   = "index.handler"
          runtime   = "nodejs22.x"
        }
      }
    }
  }

  assert {
    condition     = keys(module.sqs_consumer) == ["fifo_worker", "tool_worker"] && contains(keys(module.queue), "stream_failures")
    error_message = "dlq-redrive waits for its artifact; the failure queue exists either way."
  }
}

# The validations generated from the settings schema (variables.tf, GENERATED SETTINGS) hold for a direct `terraform plan`.
run "a_tuning_setting_out_of_its_range_is_refused" {
  command = plan

  variables {
    dlq_redrive = merge(var.dlq_redrive, { concurrency = 65 })
  }

  expect_failures = [var.dlq_redrive]
}

# The schema's whole numbers are whole in Terraform too: a fractional concurrency would reach the function
# as "2.5", which its config.ts refuses at every cold start.
run "a_fractional_tuning_setting_is_refused" {
  command = plan

  variables {
    tool_worker = merge(var.tool_worker, { concurrency = 2.5 })
  }

  expect_failures = [var.tool_worker]
}

# A margin at the timeout stops a function before it starts anything (lint:config's
# deadline-margin-not-below-timeout); a direct plan refuses it for every function alike.
run "a_deadline_margin_not_below_the_timeout_is_refused" {
  command = plan

  variables {
    processor   = merge(var.processor, { deadline_margin_ms = var.processor.timeout_seconds * 1000 })
    tool_worker = merge(var.tool_worker, { deadline_margin_ms = var.tool_worker.timeout_seconds * 1000 })
    fifo_worker = merge(var.fifo_worker, { deadline_margin_ms = var.fifo_worker.timeout_seconds * 1000 + 1 })
    dlq_redrive = merge(var.dlq_redrive, { deadline_margin_ms = var.dlq_redrive.timeout_seconds * 1000 })
  }

  expect_failures = [var.processor, var.tool_worker, var.fifo_worker, var.dlq_redrive]
}

run "a_deadline_margin_just_below_the_timeout_passes" {
  command = plan

  variables {
    processor = merge(var.processor, { deadline_margin_ms = var.processor.timeout_seconds * 1000 - 1 })
  }
}

run "a_tuning_variable_in_the_free_form_environment_is_refused" {
  command = plan

  variables {
    tool_worker = merge(var.tool_worker, { environment = { WORKER_CONCURRENCY = "4" } })
  }

  expect_failures = [var.tool_worker]
}

run "infinite_retries_pass_the_pipeline_and_the_kinesis_esm_module_alike" {
  command = plan

  variables {
    processor = merge(var.processor, { esm = merge(var.processor.esm, { maximum_retry_attempts = -1 }) })
  }

  assert {
    condition     = var.processor.esm.maximum_retry_attempts == -1
    error_message = "-1 retries (infinite, §1.3) must pass the pipeline's validations and the kinesis-esm module's."
  }
}

run "infinite_record_age_passes_the_pipeline_and_the_kinesis_esm_module_alike" {
  command = plan

  variables {
    processor = merge(var.processor, { esm = merge(var.processor.esm, { maximum_record_age_in_seconds = -1 }) })
  }

  assert {
    condition     = var.processor.esm.maximum_record_age_in_seconds == -1
    error_message = "-1 record age (infinite, §1.3) must pass the pipeline's validations and the kinesis-esm module's."
  }
}

# The break-glass role is exempt from the quarantine's protection: a role that workflows assume (bootstrap's
# mcp-<env>-deploy or -plan, of this environment or another) would hand it to any merged change. lint:config
# refuses it too (break-glass-is-a-workflow-role); this holds for an apply that never ran lint:config.
run "a_workflow_role_as_the_break_glass_role_is_refused" {
  command = plan

  variables {
    quarantine = { break_glass_role_name = "mcp-prod-deploy" }
  }

  expect_failures = [output.quarantine_bucket]
}

run "a_person_s_break_glass_role_is_accepted" {
  command = plan

  variables {
    quarantine = { break_glass_role_name = "mcp-test-quarantine-break-glass" }
  }
}
