output "function_name" {
  description = "The function."
  value       = module.function.name
}

output "role_name" {
  description = "Its role, for statements added elsewhere."
  value       = module.function.role_name
}
