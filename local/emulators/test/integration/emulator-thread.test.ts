import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorThread, healthCheck, startEmulatorThread, threadExecArgv } from "../../src/index.js";

describe("threadExecArgv", () => {
  it("drops the module loaders a thread would register again, in both spellings, and keeps the rest", () => {
    expect(
      threadExecArgv([
        "--require",
        "/x/tsx/dist/preflight.cjs",
        "--import",
        "file:///x/tsx/dist/loader.mjs",
        "--cpu-prof",
        "--import=tsx",
        "-r",
        "./hook.cjs",
        "--loader=ts-node/esm",
        "--disable-warning=ExperimentalWarning",
      ]),
    ).toEqual(["--cpu-prof", "--disable-warning=ExperimentalWarning"]);
  });

  it("gives nothing for nothing", () => {
    expect(threadExecArgv([])).toEqual([]);
  });
});

describe("an emulator thread counts the requests it answers", () => {
  let dynamodb: EmulatorThread;
  beforeAll(async () => {
    dynamodb = await startEmulatorThread("dynamodb");
  });
  afterAll(() => dynamodb.stop());

  it("by operation, as X-Amz-Target names it", async () => {
    const before = (await dynamodb.requests()).ListTables ?? 0;
    await healthCheck(dynamodb.endpoint, "dynamodb");
    await healthCheck(dynamodb.endpoint, "dynamodb");
    expect((await dynamodb.requests()).ListTables).toBe(before + 2);
  });
});
