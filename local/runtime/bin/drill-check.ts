/** `npm run drill:check`'s entry: judges a drill's stack and exits with its verdict. */
import { ExitCode, runIfMain } from "@mcp-pipeline/cli";
// Not the package index: the check needs no emulator, and loading them would load their SQLite.
import { drillCheckMain } from "../src/pipeline/drill-check-cli.js";

runIfMain(import.meta.url, (argv) => drillCheckMain(argv, process.env), ExitCode.Usage);
