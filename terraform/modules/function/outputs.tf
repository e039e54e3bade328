output "name" {
  description = "Function name."
  value       = aws_lambda_function.this.function_name
}

output "arn" {
  description = "Function ARN."
  value       = aws_lambda_function.this.arn
}

output "role_name" {
  description = "Execution role name."
  value       = aws_iam_role.this.name
}

output "timeout_seconds" {
  description = "Timeout, for alarms on Duration."
  value       = aws_lambda_function.this.timeout
}
