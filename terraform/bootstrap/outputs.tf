output "state_bucket" {
  description = "TF_STATE_BUCKET for the workflows, and -backend-config=bucket=... locally."
  value       = aws_s3_bucket.state.id
}

output "deploy_role_arns" {
  description = "DEPLOY_ROLE_ARN of each GitHub environment."
  value       = { for env, role in aws_iam_role.deploy : env => role.arn }
}

output "plan_role_arns" {
  description = "PLAN_ROLE_ARN_<env> repository variables."
  value       = { for env, role in aws_iam_role.plan : env => role.arn }
}

output "function_boundary_arns" {
  description = "The permissions boundary every function role of each environment carries."
  value       = { for env, p in aws_iam_policy.function_boundary : env => p.arn }
}

output "github_oidc_subject_claim_keys" {
  description = "The repository's OIDC subject template the roles' trust expects (docs/deploy.md: set it with the GitHub API)."
  value       = ["repo", "context", "ref", "job_workflow_ref"]
}

output "plan_on_pull_request" {
  description = "The environments whose plan role ci.yml may assume on a pull request (var.plan_on_pull_request, or its default)."
  value       = local.plan_on_pull_request
}
