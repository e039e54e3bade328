# The bucket's expiration, protection and Object Lock inputs, valid and invalid (run by `npm run tf:check`
# with a mock AWS provider: nothing is created). The rendered bucket policy, and what it denies to whom, is
# checked after the real apply on moto (tools/terraform/src/tf-check/permissions/quarantine-protection.ts).
mock_provider "aws" {
  mock_resource "aws_s3_bucket" {
    defaults = {
      arn = "arn:aws:s3:::mcp-dev-quarantine-123456789012"
      id  = "mcp-dev-quarantine-123456789012"
    }
  }
  mock_data "aws_iam_policy_document" {
    defaults = {
      json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
    }
  }
}

variables {
  name = "mcp-dev-quarantine-123456789012"
}

run "by_default_nothing_expires_and_nothing_is_locked" {
  command = plan

  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.this.rule : r.id] == ["abort-incomplete-uploads"]
    error_message = "Without an expiration the only lifecycle rule cleans up incomplete uploads: no object ever expires."
  }

  assert {
    condition     = length(aws_s3_bucket_object_lock_configuration.this) == 0
    error_message = "Object Lock is off unless asked for."
  }
}

run "the_quarantine_expires_only_what_is_tagged_replayed" {
  command = plan

  variables {
    expiration = { days = 30, only_tagged = { key = "replayed", value = "true" } }
    protection = { break_glass_role_arn = "arn:aws:iam::123456789012:role/mcp-dev-quarantine-break-glass" }
  }

  assert {
    condition = one([
      for r in aws_s3_bucket_lifecycle_configuration.this.rule : r if r.id == "expire"
      ]).filter[0].tag[0] == { key = "replayed", value = "true" } && one([
      for r in aws_s3_bucket_lifecycle_configuration.this.rule : r.expiration[0].days if r.id == "expire"
    ]) == 30
    error_message = "The expiration rule must select the replayed tag, and nothing else."
  }
}

run "the_quarantine_journals_expire_with_what_they_name" {
  command = plan

  variables {
    expiration = { days = 30, only_tagged = { key = "replayed", value = "true" }, also_prefix = "replays/" }
    protection = { break_glass_role_arn = "arn:aws:iam::123456789012:role/mcp-dev-quarantine-break-glass" }
  }

  assert {
    condition = one([
      for r in aws_s3_bucket_lifecycle_configuration.this.rule : r if r.id == "expire-prefix"
      ]).filter[0].prefix == "replays/" && one([
      for r in aws_s3_bucket_lifecycle_configuration.this.rule : r.expiration[0].days if r.id == "expire-prefix"
    ]) == 30
    error_message = "The journals under replays/ expire as many days after they are written as the replayed objects."
  }
}

run "a_prefix_alone_is_refused" {
  command = plan

  variables {
    expiration = { days = 30, also_prefix = "replays/" }
  }

  expect_failures = [var.expiration]
}

run "every_object_expires_where_no_tag_is_given" {
  command = plan

  variables {
    expiration = { days = 30 }
  }

  assert {
    condition     = length(one([for r in aws_s3_bucket_lifecycle_configuration.this.rule : r if r.id == "expire"]).filter[0].tag) == 0
    error_message = "Without only_tagged the expiration applies to every object (the results bucket)."
  }
}

run "object_lock_when_asked_for" {
  command = plan

  variables {
    object_lock = { mode = "GOVERNANCE", days = 90 }
  }

  assert {
    condition     = aws_s3_bucket_object_lock_configuration.this[0].rule[0].default_retention[0].mode == "GOVERNANCE" && aws_s3_bucket_object_lock_configuration.this[0].rule[0].default_retention[0].days == 90
    error_message = "Object Lock must retain each version for the days and in the mode given."
  }
}

run "an_object_lock_mode_s3_does_not_have_is_refused" {
  command = plan

  variables {
    object_lock = { mode = "FOREVER", days = 90 }
  }

  expect_failures = [var.object_lock]
}

run "object_lock_days_out_of_range_are_refused" {
  command = plan

  variables {
    object_lock = { mode = "COMPLIANCE", days = 0 }
  }

  expect_failures = [var.object_lock]
}

run "a_fractional_expiration_is_refused" {
  command = plan

  variables {
    expiration = { days = 1.5 }
  }

  expect_failures = [var.expiration]
}

run "a_break_glass_role_that_is_no_role_arn_is_refused" {
  command = plan

  variables {
    protection = { break_glass_role_arn = "arn:aws:iam::123456789012:user/admin" }
  }

  expect_failures = [var.protection]
}
