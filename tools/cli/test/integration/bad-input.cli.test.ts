import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  assertNoPrototypePollution,
  type BadInput,
  type BadInputExpectations,
  badArguments,
  badInputTable,
  captureStreams,
} from "@mcp-pipeline/emulators/testing";
import { main as npmStart, parseCli } from "@mcp-pipeline/local-runtime";
import { main as recover } from "@mcp-pipeline/recovery-cli";
import { main as lintConfig } from "@mcp-pipeline/terraform/config-lint";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * Command-line arguments, the boundary every CLI shares through @mcp-pipeline/cli (issue 13 §4): `npm start`
 * (local/runtime), `npm run recover` (tools/recovery-cli) and `npm run lint:config`
 * (tools/terraform/src/config-lint, tools/terraform/bin/lint-config.ts). Every bad command line of the corpus is
 * refused with exit status 2, a short message on stderr naming the option, nothing on stdout, and no request
 * to AWS: every endpoint points at a server that counts what reaches it.
 */

/** Counts the requests that reach it, and answers each with a 500. */
let requests = 0;
let server: Server;
let endpoint: string;
beforeAll(async () => {
  server = createServer((_request, response) => {
    requests += 1;
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => vi.unstubAllEnvs());

/** The AWS environment of every run: all four services at the counting server. */
function awsEnvironment(): Record<string, string> {
  return {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL_KINESIS: endpoint,
    AWS_ENDPOINT_URL_SQS: endpoint,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    QUARANTINE_BUCKET: "quarantine",
    STREAM_NAME: "events",
  };
}

interface Cli {
  readonly name: string;
  /** A whole-number option (or, for lint:config, the environment name) the corpus varies. */
  readonly option: string;
  readonly prefix: readonly string[];
  readonly main: (argv: readonly string[]) => Promise<number>;
  /** What the first line of every refusal names: the option, or for an environment that does not exist, its file. */
  readonly names?: RegExp;
  /** Cases the CLI reads as valid, with what it reads. */
  readonly accepted?: Readonly<Record<string, (argv: readonly string[]) => void>>;
}

const CLIS: readonly Cli[] = [
  {
    name: "npm start",
    option: "seed",
    prefix: [],
    main: npmStart,
    // "-0" is the whole number 0, read as 0 (not -0, which a seeded generator would print as "-0").
    accepted: { "-0": (argv) => expect(Object.is(parseCli(argv).scenario.seed, 0)).toBe(true) },
  },
  {
    name: "npm run recover",
    option: "rate",
    prefix: ["inspect"],
    main: (argv) => recover(argv, { ...process.env, ...awsEnvironment() }),
  },
  {
    name: "npm run lint:config",
    option: "env",
    prefix: [],
    main: lintConfig,
    names: /--[a-z_-]+|terraform\.tfvars\.json/,
  },
];

/** A message a person can read: the option's name, and not the whole of a huge value echoed back. */
const MAX_MESSAGE = 4_096;

describe.each(CLIS)("$name", (cli) => {
  async function expectRefused(input: BadInput<readonly string[]>) {
    for (const [name, value] of Object.entries(awsEnvironment())) vi.stubEnv(name, value);
    const before = requests;
    const { result: code, out, err } = await captureStreams(() => cli.main(input.value));
    assertNoPrototypePollution();
    expect({ code, out }).toEqual({ code: 2, out: "" });
    const message = err.split("\n\n")[0] ?? "";
    // The option as typed (`--see`, `--__proto__`), not any option: the usage text names them all.
    const typed = input.value
      .slice(cli.prefix.length)
      .find((arg) => arg.startsWith("--"))
      ?.split("=")[0];
    expect(typed).toBeDefined();
    expect(message).toMatch(cli.names ?? new RegExp(`${typed}(?![\\w-])`));
    expect(message.length).toBeLessThan(MAX_MESSAGE);
    expect(requests - before, "requests to AWS").toBe(0);
  }

  const check = (input: BadInput<readonly string[]>) => {
    const accepted = cli.accepted?.[input.name];
    if (accepted === undefined) return expectRefused(input);
    accepted(input.value);
    assertNoPrototypePollution();
  };
  const expectations = Object.fromEntries(
    Object.keys(badArguments(cli.option)).map((category) => [category, check]),
  ) as unknown as BadInputExpectations<readonly string[]>;

  it.each(badInputTable(badArguments(cli.option, cli.prefix), expectations))("$label", ({ run }) => run());
});
