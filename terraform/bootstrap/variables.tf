variable "region" {
  description = "Region of the state bucket and the environments."
  type        = string
}

variable "github_repository" {
  description = "owner/name of the repository whose workflows may assume the roles."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", var.github_repository))
    error_message = "github_repository must be owner/name."
  }
}

variable "deploy_branch" {
  description = "The only branch whose workflows get the deploy roles (and the plan roles outside pull requests)."
  type        = string
  default     = "main"

  validation {
    condition     = can(regex("^[A-Za-z0-9._/-]+$", var.deploy_branch)) && !strcontains(var.deploy_branch, "*")
    error_message = "deploy_branch must be a branch name, without wildcards."
  }
}

variable "environments" {
  description = "Environments that get a deploy role, a plan role and a function boundary; their resources are named mcp-<env>-*."
  type        = list(string)
  default     = ["dev", "prod"]

  validation {
    # No "-": mcp-<env>-* of one environment must never match another's names (mcp-dev-* would match an
    # environment dev-2's mcp-dev-2-*).
    condition     = alltrue([for env in var.environments : can(regex("^[a-z][a-z0-9]{0,15}$", env))]) && length(distinct(var.environments)) == length(var.environments)
    error_message = "environments must be distinct names of 1-16 lowercase letters and digits, starting with a letter (no \"-\")."
  }
}

variable "plan_on_pull_request" {
  description = "Environments whose plan role pull requests may assume (ci.yml's plan job); the others are planned only from the deploy branch. null: dev, where var.environments has it (none in an account without dev)."
  type        = list(string)
  default     = null

  validation {
    condition     = alltrue([for env in(var.plan_on_pull_request == null ? [] : var.plan_on_pull_request) : contains(var.environments, env)])
    error_message = "plan_on_pull_request may name only environments of var.environments."
  }
}

variable "state_bucket_prefix" {
  description = "The state bucket is <prefix>-<account id>; no environment's name pattern (mcp-<env>-*) may match it."
  type        = string
  default     = "mcp-terraform-state"

  validation {
    # Every grant of an environment is on mcp-<env>-*: its deploy role's bucket administration (policy,
    # deletion) and its functions' boundary (objects). A state bucket with that prefix (an environment
    # named "terraform" and the default prefix, or a prefix mcp-dev-...) would give that environment every
    # environment's state.
    condition     = alltrue([for env in var.environments : !startswith("${var.state_bucket_prefix}-", "mcp-${env}-")])
    error_message = "state_bucket_prefix: the state bucket <prefix>-<account> would match an environment's mcp-<env>-* (rename the environment or the prefix)."
  }

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{1,49}$", var.state_bucket_prefix))
    error_message = "state_bucket_prefix must be 2-50 of [a-z0-9-], starting with a letter or digit (the bucket name adds -<12-digit account>)."
  }
}
