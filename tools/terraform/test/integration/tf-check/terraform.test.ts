// How the check runs Terraform (terraform on the PATH, as .ci/run and the workflows have it).
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { terraform } from "../../../src/tf-check/terraform.ts";

// Nothing from the machine's own Terraform configuration: only the PATH that finds terraform.
const env = { PATH: process.env.PATH, HOME: tmpdir(), CHECKPOINT_DISABLE: "1" };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("terraform() with --verbose", () => {
  it("streams whole lines, each after its lane's name (the lanes run side by side)", async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const result = await terraform({ terraformDir: "", env, verbose: true, label: "prod" }, tmpdir(), [
      "version",
    ]);
    vi.restoreAllMocks();

    expect(result.code).toBe(0);
    expect(result.output).toMatch(/^Terraform v\d+\.\d+\.\d+/);
    const lines = written.join("").split("\n").slice(0, -1);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.startsWith("[prod] ")).toBe(true);
    expect(lines.map((l) => l.slice("[prod] ".length)).join("\n")).toBe(result.output.trimEnd());
  });

  it("without --verbose keeps the output for the error and prints nothing", async () => {
    const write = vi.spyOn(process.stdout, "write");
    const result = await terraform({ terraformDir: "", env, label: "dev" }, tmpdir(), ["version"]);
    expect(result.output).toMatch(/^Terraform v/);
    expect(write).not.toHaveBeenCalled();
  });
});
