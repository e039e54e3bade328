/**
 * `npm run lint:config`'s entry; the rules and the command line are src/config-lint/ (exported as
 * @mcp-pipeline/terraform/config-lint). The functions' default deadline margins come with the settings
 * (@mcp-pipeline/settings' tuning.ts).
 */
import { ExitCode, runIfMain } from "@mcp-pipeline/cli";
import { main } from "../src/config-lint/index.ts";

// A crash exits 2, as an unreadable settings file does: 1 means findings only.
runIfMain(import.meta.url, main, ExitCode.Usage);
