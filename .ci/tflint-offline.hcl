# tflint without the AWS ruleset: the Go module proxy that these machines reach refuses
# tflint-ruleset-aws (403 for every version), so .ci/run lints with the bundled Terraform ruleset only.
# GitHub Actions runs the full .tflint.hcl, AWS ruleset included (.github/workflows/ci.yml).
config {
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
