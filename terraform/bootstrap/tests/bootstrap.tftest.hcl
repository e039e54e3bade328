# Bootstrap's settings (run by `npm run tf:check` with a mock AWS provider: nothing is created). Each
# refused value names the variable whose validation refuses it.
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
  # The mocked policy documents must be JSON objects: aws_iam_policy and the role policies validate them.
  mock_data "aws_iam_policy_document" {
    defaults = {
      json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
    }
  }
  mock_resource "aws_s3_bucket" {
    defaults = {
      arn = "arn:aws:s3:::mcp-terraform-state-123456789012"
    }
  }
  mock_resource "aws_iam_openid_connect_provider" {
    defaults = {
      arn = "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"
    }
  }
}

variables {
  region            = "eu-west-1"
  github_repository = "example-org/mcp-event-pipelines"
}

run "the_default_settings_are_accepted" {
  command = plan

  assert {
    condition     = aws_s3_bucket.state.bucket == "mcp-terraform-state-123456789012"
    error_message = "The state bucket is <prefix>-<account>."
  }
}

# An environment named "terraform": its mcp-terraform-* grants (bucket policy, deletion, the functions'
# objects) would match the default state bucket mcp-terraform-state-<account>, every environment's state.
run "an_environment_whose_names_match_the_state_bucket_is_refused" {
  command = plan

  variables {
    environments = ["dev", "terraform"]
  }

  expect_failures = [var.state_bucket_prefix]
}

run "a_state_bucket_prefix_inside_an_environment_is_refused" {
  command = plan

  variables {
    state_bucket_prefix = "mcp-dev-state"
  }

  expect_failures = [var.state_bucket_prefix]
}

run "a_prefix_that_only_starts_like_an_environment_is_accepted" {
  command = plan

  variables {
    state_bucket_prefix = "mcp-devstate"
  }
}

run "an_environment_name_with_a_dash_is_refused" {
  command = plan

  variables {
    environments         = ["dev-2"]
    plan_on_pull_request = []
  }

  expect_failures = [var.environments]
}

# One account per environment (docs/deploy.md): prod's account is bootstrapped with prod alone, and the
# default lets pull requests plan dev only where this bootstrap creates dev.
run "one_account_per_environment_prod_alone_is_accepted" {
  command = plan

  variables {
    environments = ["prod"]
  }

  assert {
    condition     = length(output.plan_on_pull_request) == 0
    error_message = "Pull requests plan no environment of prod's account."
  }
}

run "pull_requests_plan_dev_by_default" {
  command = plan

  assert {
    condition     = output.plan_on_pull_request == tolist(["dev"])
    error_message = "By default pull requests plan dev, and only dev."
  }
}

run "pull_requests_planning_an_environment_not_created_here_is_refused" {
  command = plan

  variables {
    environments         = ["prod"]
    plan_on_pull_request = ["dev"]
  }

  expect_failures = [var.plan_on_pull_request]
}
