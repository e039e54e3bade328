# GitHub's OIDC issuer: workflows get short-lived credentials, no access keys are stored in GitHub.
resource "aws_iam_openid_connect_provider" "github" {
  url            = "https://${local.oidc}"
  client_id_list = ["sts.amazonaws.com"]
}

# Who may assume which role. AWS compares only the token's `sub` (and `aud`) claims, so the repository's
# OIDC subject template must include the run's ref and the workflow file with its ref (docs/deploy.md:
# `include_claim_keys` repo, context, ref, job_workflow_ref, output github_oidc_subject_claim_keys); the
# subject is then
#   repo:<owner/name>:<context>:ref:<ref of the run>:job_workflow_ref:<owner/name>/.github/workflows/<file>@<ref of the file>
# where <context> is environment:<env> for a job in a GitHub environment, ref:<ref> for a push without
# one, and pull_request for a pull request. Both refs are needed: a workflow of any branch (or a pull
# request) may call `<owner/name>/.github/workflows/apply.yml@main`, whose job_workflow_ref then names
# main while the run, its checkout and its inputs are the caller's; and a job in an environment has no ref
# in its context. So:
# - deploy role of <env>: apply.yml's job in the GitHub environment <env>, run on the deploy branch from
#   the deploy branch's apply.yml. A pull request that adds `environment: dev` to a workflow, a
#   workflow_dispatch from another branch, another branch's call of apply.yml@main or another workflow
#   file all carry another subject;
# - plan role of <env>: apply.yml's plan job on the deploy branch (deploy.yml, before the approval), and
#   for the environments in plan_on_pull_request only, ci.yml on a pull request (whose code the pull
#   request controls: the plan role reads configuration only, never data).
locals {
  repository     = var.github_repository
  deploy_ref     = "refs/heads/${var.deploy_branch}"
  apply_workflow = "${local.repository}/.github/workflows/apply.yml@${local.deploy_ref}"
  pr_workflow    = "${local.repository}/.github/workflows/ci.yml@refs/pull/*/merge"

  # null: dev where this account has it, so that prod's own account (environments = ["prod"]) needs no
  # other setting and trusts no pull request.
  plan_on_pull_request = var.plan_on_pull_request == null ? [for env in var.environments : env if env == "dev"] : var.plan_on_pull_request

  trust_subjects = merge(
    {
      for env in var.environments : "deploy-${env}" => [
        "repo:${local.repository}:environment:${env}:ref:${local.deploy_ref}:job_workflow_ref:${local.apply_workflow}",
      ]
    },
    {
      # A job without environment has its ref twice: once in its context, once as the ref claim.
      for env in var.environments : "plan-${env}" => concat(
        ["repo:${local.repository}:ref:${local.deploy_ref}:ref:${local.deploy_ref}:job_workflow_ref:${local.apply_workflow}"],
        contains(local.plan_on_pull_request, env) ? ["repo:${local.repository}:pull_request:ref:refs/pull/*/merge:job_workflow_ref:${local.pr_workflow}"] : [],
      )
    },
  )
}

data "aws_iam_policy_document" "github_trust" {
  for_each = local.trust_subjects
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [aws_iam_openid_connect_provider.github.arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc}:aud"
      values   = ["sts.amazonaws.com"]
    }
    # StringLike only for the pull request's number (refs/pull/<n>/merge, in both refs); a subject
    # without "*" is matched exactly.
    condition {
      test     = "StringLike"
      variable = "${local.oidc}:sub"
      values   = each.value
    }
  }
}
