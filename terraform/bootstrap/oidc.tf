# GitHub's OIDC issuer: workflows get short-lived credentials, no access keys are stored in GitHub.
resource "aws_iam_openid_connect_provider" "github" {
  url            = "https://${local.oidc}"
  client_id_list = ["sts.amazonaws.com"]
}

# Who may assume which role. AWS compares only the token's `sub` (and `aud`) claims, so the repository's
# OIDC subject template must include the workflow file and its ref (README.md: `include_claim_keys`
# repo, context, job_workflow_ref); the subject is then
#   repo:<owner/name>:<context>:job_workflow_ref:<owner/name>/.github/workflows/<file>@<ref>
# where <context> is environment:<env> for a job in a GitHub environment, ref:<ref> for a push without
# one, and pull_request for a pull request. So:
# - deploy role of <env>: apply.yml's job in the GitHub environment <env>, from the deploy branch only. A
#   pull request that adds `environment: dev` to a workflow, a workflow_dispatch from another branch or
#   another workflow file all carry another subject;
# - plan role of <env>: apply.yml's plan job on the deploy branch (deploy.yml, before the approval), and
#   for the environments in plan_on_pull_request only, ci.yml on a pull request (whose code the pull
#   request controls: the plan role reads configuration only, never data).
locals {
  repository     = var.github_repository
  deploy_ref     = "refs/heads/${var.deploy_branch}"
  apply_workflow = "${local.repository}/.github/workflows/apply.yml@${local.deploy_ref}"
  pr_workflow    = "${local.repository}/.github/workflows/ci.yml@refs/pull/*/merge"

  trust_subjects = merge(
    {
      for env in var.environments : "deploy-${env}" => [
        "repo:${local.repository}:environment:${env}:job_workflow_ref:${local.apply_workflow}",
      ]
    },
    {
      for env in var.environments : "plan-${env}" => concat(
        ["repo:${local.repository}:ref:${local.deploy_ref}:job_workflow_ref:${local.apply_workflow}"],
        contains(var.plan_on_pull_request, env) ? ["repo:${local.repository}:pull_request:job_workflow_ref:${local.pr_workflow}"] : [],
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
    # StringLike only for the pull request's number (refs/pull/<n>/merge); a subject without "*" is
    # matched exactly.
    condition {
      test     = "StringLike"
      variable = "${local.oidc}:sub"
      values   = each.value
    }
  }
}
