// The core is the worker's (packages/worker: processToolCallJobs); what is fifo-worker's own is the tools it
// runs: the catalogue's, configured from the environment, with validators compiled at build time.

export { catalogueRegistry as toolRegistry } from "@mcp-pipeline/tools";
export { processToolCallJobs } from "@mcp-pipeline/worker";
