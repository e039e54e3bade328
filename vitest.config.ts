import { defineConfig } from "vitest/config";

/** Where tests live: each workspace's test/unit and test/integration, and the repository's in scripts/. */
const TIERS = "{packages,local,tools,functions,scripts}";

/**
 * Suites whose outcome depends on what AWS answers, run a second time against moto's server (project
 * "moto"; docs/emulator-fidelity.md says why each is here). They start their endpoints through
 * start*Endpoint (@mcp-pipeline/emulators), which MCP_TEST_AWS=moto points at moto. The first run
 * installs moto into the CI tools cache (.ci/moto.sh, ~45 s).
 */
export const MOTO_SUITES = [
  "packages/tool-calls/test/integration/store.test.ts",
  "packages/aws/test/integration/producer.test.ts",
  "local/runtime/test/integration/sqs-conformance.test.ts",
  "packages/recovery/test/integration/quarantine/store.test.ts",
];

export default defineConfig({
  test: {
    exclude: ["**/node_modules/**", "**/dist/**"],
    // Integration tests start emulators on loopback and wait for what they assert, never for a timer.
    // These bounds only stop a test that hangs: a two-core machine running two copies of the suite
    // and more besides takes minutes for what takes seconds when idle.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [`${TIERS}/**/test/unit/**/*.test.ts`],
          // No socket, no server, no child process: what needs one is an integration test.
          setupFiles: ["scripts/lib/unit-guard.ts"],
        },
      },
      {
        extends: true,
        test: { name: "integration", include: [`${TIERS}/**/test/integration/**/*.test.ts`] },
      },
      {
        extends: true,
        test: {
          name: "moto",
          include: MOTO_SUITES,
          env: { MCP_TEST_AWS: "moto" },
          // The first start installs moto (.ci/moto.sh); later starts take seconds on a loaded machine.
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
