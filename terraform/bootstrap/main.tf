# One-time, per AWS account, with an administrator's credentials and local state (see README.md): the
# state bucket the environments use, GitHub's OIDC provider, and per environment a deploy role and a plan
# role that only this repository's reviewed workflows on the deploy branch can assume, plus the permissions
# boundary of every role the deploy role creates. docs/security.md is the threat model.
provider "aws" {
  region = var.region
}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account   = data.aws_caller_identity.current.account_id
  partition = data.aws_partition.current.partition
  oidc      = "token.actions.githubusercontent.com"
  iam       = "arn:${local.partition}:iam::${local.account}"

  # Everything of environment <env> is named mcp-<env>-...: the environments' name_prefix is "mcp-<env>"
  # (terraform/environments/<env>/terraform.tfvars.json), which derives the same names on its side
  # (environments/common/main.tf); `npm run iam:check` fails if the two sides disagree. Environment names
  # have no "-" (variables.tf), so no environment's prefix is the start of another's.
  prefix = { for env in var.environments : env => "mcp-${env}" }

  # The functions' roles live under a path of their own, /mcp-<env>/: the deploy role may manage roles
  # there only, and no role that bootstrap creates (path /) is in any environment's path.
  function_roles = { for env, p in local.prefix : env => "${local.iam}:role/${p}/*" }
  # The environment's functions: what its event source mappings may point at (lambda:FunctionArn).
  functions = { for env, p in local.prefix : env => "arn:${local.partition}:lambda:${var.region}:${local.account}:function:${p}-*" }

  # Every principal and policy this root creates, which no environment's role may change (deny on self).
  bootstrap_iam = concat(
    [for p in values(local.prefix) : "${local.iam}:role/${p}-deploy"],
    [for p in values(local.prefix) : "${local.iam}:role/${p}-plan"],
    [for p in values(local.prefix) : "${local.iam}:policy/${p}-function-boundary"],
    ["${local.iam}:oidc-provider/${local.oidc}"],
  )
}

# What every deploy and plan role has besides its own statements.
data "aws_iam_policy_document" "every_role" {
  # checkov:skip=CKV_AWS_356:"*" only for reads that have no resource type (ListEventSourceMappings, DescribeLimits, DescribeLogGroups, GetCallerIdentity, ListAliases).
  statement {
    sid       = "ReadWithoutResourceType"
    actions   = ["lambda:ListEventSourceMappings", "kinesis:DescribeLimits", "logs:DescribeLogGroups", "sts:GetCallerIdentity", "kms:ListAliases"]
    resources = ["*"]
  }
  # No role of any environment may change a principal or policy that bootstrap creates, its own included.
  statement {
    sid       = "DenyBootstrapIam"
    effect    = "Deny"
    actions   = ["iam:*"]
    resources = local.bootstrap_iam
  }
}
