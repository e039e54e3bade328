/** `npm start`'s entry: runs the local pipeline with the command line and exits with its status. */
import { ExitCode, runIfMain } from "@mcp-pipeline/cli";
import { main } from "../src/index.js";

runIfMain(import.meta.url, main, ExitCode.Failed);
