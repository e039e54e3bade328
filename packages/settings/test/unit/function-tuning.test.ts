// A function reads its own tuning by name (functionTuning): in its bundle, function-environment.json holds that
// function's part alone (tools/bundler's projection), and asking for another function's must fail by name.
import { afterEach, describe, expect, it, vi } from "vitest";
import declaration from "../../../../terraform/modules/pipeline/function-environment.json" with {
  type: "json",
};
import { functionTuning, TUNING } from "../../src/index.js";

const DECLARATION = "../../../../terraform/modules/pipeline/function-environment.json";

describe("functionTuning", () => {
  afterEach(() => {
    vi.doUnmock(DECLARATION);
    vi.resetModules();
  });

  it.each(Object.keys(TUNING) as (keyof typeof TUNING)[])("%s: the declared tuning", (fn) => {
    expect(functionTuning(fn)).toEqual(declaration.functions[fn].tuning);
  });

  it("with a declaration that holds one function (a bundle's), gives that one and refuses another by name", async () => {
    vi.doMock(DECLARATION, () => ({
      default: {
        sources: declaration.sources,
        functions: { fifo_worker: declaration.functions.fifo_worker },
      },
    }));
    const bundled = await import("../../src/function-tuning.js");
    expect(bundled.functionTuning("fifo_worker").concurrency.default).toBe(
      declaration.functions.fifo_worker.tuning.concurrency.default,
    );
    expect(() => bundled.functionTuning("tool_worker")).toThrow(
      "function-environment.json as bundled declares fifo_worker, not tool_worker: a function's bundle holds its own declaration only (tools/bundler)",
    );
  });
});
