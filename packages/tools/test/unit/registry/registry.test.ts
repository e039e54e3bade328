import { failureKindOf, PermanentError } from "@mcp-pipeline/contracts";
import { describe, expect, it } from "vitest";
import { compileWithAjv } from "../../../src/registry/ajv.js";
import {
  DeadlinePassedError,
  defineTool,
  InvalidArgumentsError,
  InvalidResultError,
  precompiledValidators,
  type RegisteredTool,
  ToolDefinitionError,
  ToolRegistry,
  ToolSlotWaitError,
  ToolTimeoutError,
  UnknownToolError,
} from "../../../src/registry/index.js";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const call = (tool: string, args: Record<string, unknown> = {}, extra: object = {}) => ({
  tool,
  arguments: args,
  callId: "call-1",
  sessionId: "session-1",
  attempt: 1,
  ...extra,
});
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const greet = defineTool<{ name: string; times?: number }, string>({
  name: "greet",
  description: "Greets someone",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", minLength: 1 },
      times: { type: "integer", minimum: 1, maximum: 3 },
      email: { type: "string", format: "email" },
    },
    required: ["name"],
    additionalProperties: false,
  },
  timeoutMs: 1_000,
  concurrency: 4,
  run: async ({ name, times = 1 }) => `hello ${name}`.repeat(times),
});

const tool = (overrides: Partial<RegisteredTool>): RegisteredTool => ({
  ...(greet as RegisteredTool),
  ...overrides,
});

/** A registry of one tool that only notes that it ran, so a test can show that a refused call never ran it. */
function watchedRegistry() {
  let ran = false;
  const registry = new ToolRegistry(
    [
      tool({
        run: async () => {
          ran = true;
        },
      }),
    ],
    compileWithAjv(),
  );
  return { registry, ran: () => ran };
}

describe("ToolRegistry.invoke", () => {
  it("runs a tool with valid arguments and returns the value with its JSON text", async () => {
    const registry = new ToolRegistry([greet as RegisteredTool], compileWithAjv());
    const run = await registry.invoke(call("greet", { name: "Ada", times: 2 }), { logger: silent });
    expect(run.value).toBe("hello Adahello Ada");
    expect(run.json).toBe('"hello Adahello Ada"');
  });

  it("refuses an unknown tool with a permanent UnknownToolError naming the tools it has", async () => {
    const registry = new ToolRegistry([greet as RegisteredTool], compileWithAjv());
    const error = await registry.invoke(call("graet"), { logger: silent }).catch((e) => e);
    expect(error).toBeInstanceOf(UnknownToolError);
    expect(failureKindOf(error)).toBe("permanent");
    expect(error.message).toContain("greet");
  });

  it.each([
    [{}, [{ path: "", message: "must have required property 'name'" }]],
    [{ name: 7 }, [{ path: "/name", message: "must be string" }]],
    [{ name: "Ada", times: 9 }, [{ path: "/times", message: "must be <= 3" }]],
    [{ name: "Ada", email: "not-an-email" }, [{ path: "/email", message: 'must match format "email"' }]],
    [{ name: "Ada", extra: true }, [{ path: "", message: 'has unexpected property "extra"' }]],
  ])("refuses arguments %j before the tool runs, with the problems by path", async (args, problems) => {
    const { registry, ran } = watchedRegistry();
    const error = await registry.invoke(call("greet", args), { logger: silent }).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidArgumentsError);
    expect(failureKindOf(error)).toBe("permanent");
    expect(error.problems).toEqual(problems);
    expect(ran()).toBe(false);
  });

  it("names an unexpected property of 100,000 characters clipped, so the error stays short whatever the arguments hold", async () => {
    const { registry, ran } = watchedRegistry();
    const key = "k".repeat(100_000);
    const error = await registry
      .invoke(call("greet", { name: "Ada", [key]: 1 }), { logger: silent })
      .catch((e) => e);
    expect(error).toBeInstanceOf(InvalidArgumentsError);
    expect(error.problems).toEqual([{ path: "", message: `has unexpected property "${"k".repeat(119)}…` }]);
    expect(error.message.length).toBeLessThan(400);
    expect(ran()).toBe(false);
  });

  it("fails a call whose deadline has passed without running it (permanent)", async () => {
    const { registry, ran } = watchedRegistry();
    const past = new Date(Date.now() - 1_000).toISOString();
    const error = await registry
      .invoke(call("greet", { name: "Ada" }, { deadline: past }), { logger: silent })
      .catch((e) => e);
    expect(error).toBeInstanceOf(DeadlinePassedError);
    expect(failureKindOf(error)).toBe("permanent");
    expect(ran()).toBe(false);
  });

  it("times out a tool that ignores its signal, as a transient ToolTimeoutError", async () => {
    const registry = new ToolRegistry([tool({ timeoutMs: 30, run: () => sleep(5_000) })], compileWithAjv());
    const error = await registry.invoke(call("greet", { name: "Ada" }), { logger: silent }).catch((e) => e);
    expect(error).toBeInstanceOf(ToolTimeoutError);
    expect(failureKindOf(error)).toBe("transient");
  });

  it("aborts the tool's signal at the timeout, and the invocation's budget can shorten the timeout", async () => {
    let reason: unknown;
    const registry = new ToolRegistry(
      [
        tool({
          timeoutMs: 10_000,
          run: (_args, { signal }) =>
            new Promise((_, reject) => {
              signal.addEventListener("abort", () => {
                reason = signal.reason;
                reject(signal.reason);
              });
            }),
        }),
      ],
      compileWithAjv(),
    );
    const error = await registry
      // The registry's clock stands still: no time passes between the call and the start (see below for the wait).
      .invoke(call("greet", { name: "Ada" }), { logger: silent, budgetMs: 20, now: () => 1_000 })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ToolTimeoutError);
    expect(error.timeoutMs).toBe(20);
    expect(reason).toBe(error);
  });

  describe("the time budget counts the wait for a concurrency slot (issue 10, defect 4)", () => {
    /** A tool with one slot; each run waits until it is let go, or until its signal aborts. */
    function oneSlot() {
      const holders: (() => void)[] = [];
      let started = 0;
      let holding: () => void = () => undefined;
      const firstHolds = new Promise<void>((r) => {
        holding = r;
      });
      const registry = new ToolRegistry(
        [
          tool({
            timeoutMs: 10_000,
            concurrency: 1,
            run: (_args, { signal }) =>
              new Promise((resolve, reject) => {
                started += 1;
                holders.push(() => resolve("done"));
                holding();
                signal.addEventListener("abort", () => reject(signal.reason));
              }),
          }),
        ],
        compileWithAjv(),
      );
      return { registry, firstHolds, letGo: () => holders.shift()?.(), started: () => started };
    }

    it("a queued run gets only the budget left after its wait, not the whole budget", async () => {
      const { registry, firstHolds, letGo } = oneSlot();
      let clock = 1_000_000;
      const now = () => clock;
      const first = registry.invoke(call("greet", { name: "Ada" }), { logger: silent, now });
      await firstHolds;
      // Budget 60 s from the call; the slot frees up 59.95 s later (the clock is the registry's).
      const queued = registry
        .invoke(call("greet", { name: "Ada" }), { logger: silent, budgetMs: 60_000, now })
        .catch((e: unknown) => e);
      expect(registry.load("greet")).toEqual({ active: 1, waiting: 1 });
      clock += 59_950;
      letGo();
      expect(await first).toMatchObject({ value: "done" });
      const error = await queued;
      expect(error).toBeInstanceOf(ToolTimeoutError);
      // Before the fix the run got the whole 60 s (capped by the tool's 10 s) and outlived the invocation.
      expect((error as ToolTimeoutError).timeoutMs).toBe(50);
    });

    it("a run whose budget ends while it waits for a slot leaves the queue and never starts", async () => {
      const { registry, firstHolds, letGo, started } = oneSlot();
      const first = registry.invoke(call("greet", { name: "Ada" }), { logger: silent });
      await firstHolds;
      const error = await registry
        .invoke(call("greet", { name: "Ada" }), { logger: silent, budgetMs: 20 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolSlotWaitError);
      expect(failureKindOf(error)).toBe("transient");
      expect(registry.load("greet")).toEqual({ active: 1, waiting: 0 });
      letGo();
      await first;
      expect(started()).toBe(1);
      expect(registry.load("greet")).toEqual({ active: 0, waiting: 0 });
    });

    it("a budget already spent does not start the tool", async () => {
      const { registry, started } = oneSlot();
      const error = await registry
        .invoke(call("greet", { name: "Ada" }), { logger: silent, budgetMs: 0 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolSlotWaitError);
      expect(started()).toBe(0);
    });
  });

  it("keeps at most `concurrency` runs of a tool in flight", async () => {
    let active = 0;
    let peak = 0;
    const registry = new ToolRegistry(
      [
        tool({
          concurrency: 2,
          run: async () => {
            active += 1;
            peak = Math.max(peak, active);
            await sleep(10);
            active -= 1;
            return "done";
          },
        }),
      ],
      compileWithAjv(),
    );
    const runs = Array.from({ length: 7 }, () =>
      registry.invoke(call("greet", { name: "Ada" }), { logger: silent }),
    );
    await Promise.all(runs);
    expect(peak).toBe(2);
    expect(registry.load("greet")).toEqual({ active: 0, waiting: 0 });
  });

  it("passes a tool's own errors through with their kind", async () => {
    const registry = new ToolRegistry(
      [
        tool({
          name: "perm",
          run: async () => Promise.reject(new PermanentError("quota-exhausted", "no quota")),
        }),
        tool({ name: "boom", run: async () => Promise.reject(new Error("socket hang up")) }),
      ],
      compileWithAjv(),
    );
    const perm = await registry.invoke(call("perm", { name: "x" }), { logger: silent }).catch((e) => e);
    const boom = await registry.invoke(call("boom", { name: "x" }), { logger: silent }).catch((e) => e);
    expect([perm.code, failureKindOf(perm)]).toEqual(["quota-exhausted", "permanent"]);
    expect([boom.message, failureKindOf(boom)]).toEqual(["socket hang up", "transient"]);
  });

  it("refuses a result that has no JSON form (permanent: the tool has a bug)", async () => {
    const registry = new ToolRegistry([tool({ run: async () => ({ n: 10n }) })], compileWithAjv());
    const error = await registry.invoke(call("greet", { name: "Ada" }), { logger: silent }).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidResultError);
    expect(failureKindOf(error)).toBe("permanent");
  });

  it("stores undefined as null", async () => {
    const registry = new ToolRegistry([tool({ run: async () => undefined })], compileWithAjv());
    expect((await registry.invoke(call("greet", { name: "Ada" }), { logger: silent })).json).toBe("null");
  });
});

describe("ToolRegistry construction fails fast on a bad definition", () => {
  it.each([
    ["a bad name", tool({ name: "has space" }), "the name must be"],
    ["a zero timeout", tool({ timeoutMs: 0 }), "timeoutMs"],
    ["a timeout beyond Lambda's 15 minutes", tool({ timeoutMs: 900_001 }), "timeoutMs"],
    ["a zero concurrency", tool({ concurrency: 0 }), "concurrency"],
    ["a non-object schema", tool({ inputSchema: { type: "string" } as never }), 'type "object"'],
    [
      "an unknown keyword (typo)",
      tool({ inputSchema: { type: "object", propertys: {} } }),
      "does not compile",
    ],
    ["an invalid schema", tool({ inputSchema: { type: "object", required: "name" } }), "does not compile"],
  ])("%s", (_label, definition, message) => {
    expect(() => new ToolRegistry([definition], compileWithAjv())).toThrow(ToolDefinitionError);
    expect(() => new ToolRegistry([definition], compileWithAjv())).toThrow(message);
  });

  it("a name declared twice", () => {
    expect(
      () => new ToolRegistry([greet as RegisteredTool, greet as RegisteredTool], compileWithAjv()),
    ).toThrow("declared twice");
  });

  it("describes its tools as MCP tools/list does", () => {
    expect(new ToolRegistry([greet as RegisteredTool], compileWithAjv()).describe()).toEqual([
      { name: "greet", description: "Greets someone", inputSchema: greet.inputSchema },
    ]);
  });
});

describe("validators compiled at build time (precompiledValidators)", () => {
  // Real validators, compiled here by Ajv as the build compiles them, under the tool's name.
  const compiled = (schema: unknown = greet.inputSchema) => ({
    validators: { greet: compileWithAjv()(tool({ inputSchema: schema as RegisteredTool["inputSchema"] })) },
    schemas: { greet: JSON.stringify(schema) },
  });

  it("checks arguments with the tool's validator, with the problems by path", async () => {
    const registry = new ToolRegistry([greet as RegisteredTool], precompiledValidators(compiled()));
    expect((await registry.invoke(call("greet", { name: "Ada" }), { logger: silent })).value).toBe(
      "hello Ada",
    );
    const error = await registry.invoke(call("greet", { name: 7 }), { logger: silent }).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidArgumentsError);
    expect(error.problems).toEqual([{ path: "/name", message: "must be string" }]);
  });

  it("refuses at start-up a tool that has no validator", () => {
    const other = tool({ name: "other" });
    expect(() => new ToolRegistry([other], precompiledValidators(compiled()))).toThrow(ToolDefinitionError);
    expect(() => new ToolRegistry([other], precompiledValidators(compiled()))).toThrow(
      "no validator was compiled for it at build time",
    );
  });

  it("refuses at start-up a tool whose inputSchema changed since its validator was compiled", () => {
    const stale = compiled({ ...greet.inputSchema, required: [] });
    expect(() => new ToolRegistry([greet as RegisteredTool], precompiledValidators(stale))).toThrow(
      "its validator was compiled from another version of its inputSchema",
    );
  });

  it("does not take a validator from the prototype chain for a tool named like one of its keys", () => {
    expect(() => new ToolRegistry([tool({ name: "toString" })], precompiledValidators(compiled()))).toThrow(
      ToolDefinitionError,
    );
  });
});
