/** `npm run drill:check`'s command line: see USAGE. */

import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { ExitCode, parseCommandLine, refuseCommandLine, UsageError } from "@mcp-pipeline/cli";
import { checkDrill, formatDrillVerdict } from "./drill-check.js";
import { DrillLedgerError, readDrillLedger } from "./drill-ledger.js";
import { endpointsFromEnvironment } from "./endpoints.js";

export const DRILL_CHECK_USAGE = `npm run drill:check -- [--json]

Says whether the drill of a stack started with \`npm start -- --serve --drill\` is done: every valid input
it left applied (its call in the tool-calls table) and every permanent poison kept (in the quarantine or
its DLQ). Each input that is not is named, with where it is and what brings it home. Judged from the
stack's state against the drill's ledger (DRILL_LEDGER), which nothing but the drill writes.

Run it in the shell that loaded the served file (set -a; . /tmp/stack.env; set +a): it reads DRILL_LEDGER,
AWS_ENDPOINT_URL_*, AWS_REGION and the credentials from there.

  --json       the verdict as one JSON object on stdout
  -h, --help   show this help

Exit status: 0 done; 1 not done (an input still to recover, or lost); 2 a bad option, or no drill to check.`;

export async function drillCheckMain(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: { json?: boolean; help?: boolean };
  try {
    values = parseCommandLine(argv, {
      allowPositionals: false,
      options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }).values;
  } catch (error) {
    return refuseCommandLine(error, DRILL_CHECK_USAGE);
  }
  if (values.help) {
    process.stdout.write(`${DRILL_CHECK_USAGE}\n`);
    return ExitCode.Ok;
  }
  const load = "load the served file first: set -a; . /tmp/stack.env; set +a";
  if (!env.DRILL_LEDGER)
    return refuseCommandLine(
      new UsageError(
        `DRILL_LEDGER is not set: this checks a stack started with npm start -- --serve --drill; ${load}`,
      ),
      DRILL_CHECK_USAGE,
    );
  const endpoints = endpointsFromEnvironment(env);
  if (!endpoints)
    return refuseCommandLine(
      new UsageError(
        `AWS_ENDPOINT_URL_DYNAMODB, _KINESIS, _SQS and _S3 (or AWS_ENDPOINT_URL) are not all set; ${load}`,
      ),
      DRILL_CHECK_USAGE,
    );
  let ledger: Awaited<ReturnType<typeof readDrillLedger>>;
  try {
    ledger = await readDrillLedger(env.DRILL_LEDGER);
  } catch (error) {
    if (!(error instanceof DrillLedgerError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return ExitCode.Usage;
  }
  const client = { region: env.AWS_REGION ?? ledger.region };
  const clients = {
    dynamodb: new DynamoDBClient({ ...client, endpoint: endpoints.dynamodb }),
    sqs: sqsClient({ ...client, endpoint: endpoints.sqs }),
    s3: s3Client({ ...client, endpoint: endpoints.s3 }, env),
  };
  try {
    const verdict = await checkDrill(clients, ledger);
    process.stdout.write(
      values.json ? `${JSON.stringify(verdict)}\n` : `${formatDrillVerdict(ledger, verdict)}\n`,
    );
    return verdict.done ? ExitCode.Ok : ExitCode.Failed;
  } finally {
    for (const c of Object.values(clients)) c.destroy();
  }
}
