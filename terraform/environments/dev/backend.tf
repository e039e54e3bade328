# State in the bootstrap's bucket (terraform/bootstrap), locked with an S3 lock file (Terraform >= 1.10).
# The bucket and region come from -backend-config in the workflows, so no account id is committed.
terraform {
  backend "s3" {
    key          = "mcp-event-pipelines/dev/terraform.tfstate"
    use_lockfile = true
    encrypt      = true
  }
}
