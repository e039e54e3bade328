/**
 * Issue 26 item 12: a local function runs as Lambda's Node.js runtime runs it (docs/aws-semantics.md §9.4):
 * with the handler string of its configuration resolved in its unpacked package (a changed handler fails
 * here as it would on Lambda), with the environment Lambda gives it (reserved variables, the log format and
 * level), writing its console and its errors as the runtime writes them.
 */
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  assertNoReservedVariables,
  type FunctionDefinition,
  type InvokeResult,
  LocalFunction,
  RESERVED_VARIABLES,
  ReservedVariableError,
} from "../../src/index.js";

const PACKAGE = join(import.meta.dirname, "../fixtures/package");
let taskRoot: string;
beforeAll(async () => {
  taskRoot = await mkdtemp(join(tmpdir(), "lambda-runtime-"));
  await cp(PACKAGE, taskRoot, { recursive: true });
  await writeFile(join(taskRoot, "broken.mjs"), "export const handler = async () => {\n");
});
afterAll(() => rm(taskRoot, { recursive: true, force: true }));

const functions: LocalFunction[] = [];
afterEach(async () => {
  await Promise.all(functions.splice(0).map((f) => f.stop()));
});

/** A function of the test package with `handler`; its log lines are collected. */
function make(handler: string, extra: Partial<FunctionDefinition> = {}) {
  const lines: string[] = [];
  const fn = new LocalFunction(
    {
      name: "runtime-test",
      taskRoot,
      handler,
      runtime: "nodejs22.x",
      timeoutMs: 60_000,
      memoryMb: 256,
      environment: { OWN: "own value" },
      region: "eu-west-1",
      logging: { format: "JSON", applicationLogLevel: "INFO" },
      tracing: true,
      ...extra,
    } as FunctionDefinition,
    { AWS_ACCESS_KEY_ID: "local", AWS_SECRET_ACCESS_KEY: "local", AWS_SESSION_TOKEN: "local" },
    (_fn, line) => lines.push(line),
  );
  functions.push(fn);
  return { fn, lines };
}

/** The sandbox's lines reach the host through its stdout, after the answer: wait for `count` of them. */
const linesArrive = (lines: readonly string[], count: number) =>
  vi.waitFor(() => expect(lines.length).toBeGreaterThanOrEqual(count), { timeout: 60_000, interval: 20 });

const payloadOf = (result: InvokeResult) => {
  if (result.kind !== "ok") throw new Error(`${result.errorType}: ${result.errorMessage}`);
  return JSON.parse(result.payload) as { env: Record<string, string> };
};

describe("the handler string, resolved as Lambda's Node.js runtime resolves it", () => {
  it("index.handler runs index.mjs's handler; a path and a nested export resolve too", async () => {
    expect(payloadOf(await make("index.handler").fn.invoke({})).env._HANDLER).toBe("index.handler");
    const nested = await make("lib/app.nested.handle").fn.invoke({});
    expect(nested).toMatchObject({ kind: "ok", payload: '{"from":"lib/app.nested.handle"}' });
  });

  it.each([
    ["index.main", "Runtime.HandlerNotFound", "index.main is undefined or not exported"],
    ["index.notAFunction", "Runtime.HandlerNotFound", "index.notAFunction is not a function"],
    ["main.handler", "Runtime.ImportModuleError", "Cannot find module 'main'"],
    ["index", "Runtime.MalformedHandlerName", "Bad handler"],
    ["../index.handler", "Runtime.MalformedHandlerName", "'../index.handler' is not a valid handler name"],
    ["broken.handler", "Runtime.UserCodeSyntaxError", "SyntaxError"],
  ])("%s fails every invocation with %s, logged as the runtime logs it", async (handler, type, message) => {
    const { fn, lines } = make(handler);
    for (let i = 0; i < 2; i++) {
      const result = await fn.invoke({});
      expect(result).toMatchObject({ kind: "function-error", errorType: type, timedOut: false });
      expect(result.kind === "function-error" && result.errorMessage).toContain(message);
    }
    // The init error, in the JSON format: the error alone, its class's name as errorType.
    await linesArrive(lines, 1);
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.level === "ERROR");
    expect(logged?.message).toMatchObject({ errorType: type.replace("Runtime.", "") });
    expect(logged?.message.errorMessage).toContain(message);
  });
});

describe("the environment Lambda gives a function", () => {
  it("sets the reserved variables, the log format and level, and nothing of the host's", async () => {
    const env = payloadOf(await make("index.handler").fn.invoke({})).env;
    expect(env).toMatchObject({
      _HANDLER: "index.handler",
      LAMBDA_TASK_ROOT: taskRoot,
      AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x",
      AWS_REGION: "eu-west-1",
      AWS_DEFAULT_REGION: "eu-west-1",
      AWS_LAMBDA_FUNCTION_NAME: "runtime-test",
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "256",
      AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
      AWS_LAMBDA_LOG_GROUP_NAME: "/aws/lambda/runtime-test",
      AWS_LAMBDA_LOG_FORMAT: "JSON",
      AWS_LAMBDA_LOG_LEVEL: "INFO",
      AWS_XRAY_CONTEXT_MISSING: "LOG_ERROR",
      AWS_SESSION_TOKEN: "local",
      TZ: ":UTC",
      LANG: "en_US.UTF-8",
      OWN: "own value",
    });
    expect(env.AWS_LAMBDA_LOG_STREAM_NAME).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
    // Active tracing: each invocation has a trace header of its own.
    expect(env._X_AMZN_TRACE_ID).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1$/);
    // No local-only variable that changes what the code does or logs.
    for (const name of [
      "NODE_OPTIONS",
      "LOCAL_FUNCTION_ARN",
      "POWERTOOLS_LOG_LEVEL",
      "METRICS_NAMESPACE",
      "PATH",
    ])
      expect(env, name).not.toHaveProperty(name);
  });

  it("refuses a configured environment that sets a reserved variable, as Lambda does", () => {
    expect(RESERVED_VARIABLES.has("_HANDLER")).toBe(true);
    expect(() => assertNoReservedVariables("f", { AWS_REGION: "us-east-1", _HANDLER: "x.y" })).toThrow(
      ReservedVariableError,
    );
    expect(() => assertNoReservedVariables("f", { LAMBDA_TASK_ROOT: "/tmp" })).toThrow(
      "function f: LAMBDA_TASK_ROOT is reserved by Lambda and cannot be set in its environment",
    );
    expect(() => assertNoReservedVariables("f", { OWN: "x", HTTP_TOOL_BASE_URL: "http://x" })).not.toThrow();
  });

  it("what the runtime decides is the runtime's, whatever a caller's environment says", async () => {
    const { fn } = make("index.handler", { environment: { _HANDLER: "x.y", AWS_LAMBDA_LOG_FORMAT: "Text" } });
    const env = payloadOf(await fn.invoke({})).env;
    expect(env).toMatchObject({ _HANDLER: "index.handler", AWS_LAMBDA_LOG_FORMAT: "JSON" });
  });
});

describe("logs, as the runtime writes them", () => {
  it("JSON format at INFO: console lines with the request id, DEBUG dropped, the function error as Invoke Error", async () => {
    const { fn, lines } = make("index.handler");
    const result = await fn.invoke({
      log: [
        ["debug", "not at INFO"],
        ["log", "a log line"],
        ["warn", "a warning\nover two lines"],
      ],
      fail: "boom",
    });
    expect(result).toMatchObject({ kind: "function-error", errorType: "TypeError", errorMessage: "boom" });
    await linesArrive(lines, 3);
    const json = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json.map((l) => [l.level, typeof l.message === "string" ? l.message : "(error)"])).toEqual([
      ["INFO", "a log line"],
      ["WARN", "a warning\nover two lines"],
      ["ERROR", "(error)"],
    ]);
    // One line per call: the newline became a carriage return on the wire, as the runtime writes it.
    expect(lines[1]).not.toContain("\n");
    const error = json[2] as { requestId: string; message: Record<string, unknown> };
    expect(error.message).toMatchObject({ errorType: "TypeError", errorMessage: "boom" });
    expect((error.message.stackTrace as string[])[0]).toBe("TypeError: boom");
    expect(error.requestId).toBe(result.requestId);
    expect(json.every((l) => l.requestId === result.requestId && typeof l.timestamp === "string")).toBe(true);
  });

  it("Text format (Lambda's default): tab-separated lines, the error after 'Invoke Error'", async () => {
    const { fn, lines } = make("index.handler", { logging: { format: "Text" } });
    const result = await fn.invoke({ log: [["debug", "kept: no level filter in Text"]], fail: "boom" });
    await linesArrive(lines, 2);
    expect(lines[0]).toMatch(
      new RegExp(`^\\d{4}-.+Z\\t${result.requestId}\\tDEBUG\\tkept: no level filter in Text$`),
    );
    expect(lines[1]).toMatch(/\tERROR\tInvoke Error \t\{"errorType":"TypeError","errorMessage":"boom"/);
  });

  it("a timeout is the platform's report, with the request id and status timeout", async () => {
    const { fn, lines } = make("index.handler", { timeoutMs: 1_000 });
    const result = await fn.invoke({ sleepMs: 600_000 });
    expect(result).toMatchObject({ kind: "function-error", errorType: "Sandbox.Timedout", timedOut: true });
    await linesArrive(lines, 1);
    const report = lines.map((l) => JSON.parse(l)).find((l) => l.type === "platform.report");
    expect(report?.record).toMatchObject({ requestId: result.requestId, status: "timeout" });
  });
});
