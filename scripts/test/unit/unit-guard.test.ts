// The unit guard (scripts/lib/unit-guard.ts) seen refusing: this file runs in the unit project, where the
// guard is installed before every file. If the guard stopped refusing, a unit test could reach an emulator
// and the split would mean nothing: each of these fails then.
import { execFileSync, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { UnitGuardError } from "../../lib/unit-guard.ts";

describe("the unit guard", () => {
  it("refuses a connection, naming the call and where the test belongs", () => {
    const attempt = () => connect({ host: "127.0.0.1", port: 9 });
    expect(attempt).toThrow(UnitGuardError);
    expect(attempt).toThrow(
      /net\.Socket\.connect: a unit test opens no socket.*belongs in test\/integration\//,
    );
  });

  it("refuses a listening server", () => {
    expect(() => createServer().listen(0, "127.0.0.1")).toThrow(/net\.Server\.listen/);
  });

  it("refuses HTTP through fetch, whose socket is a net.Socket", async () => {
    await expect(fetch("http://127.0.0.1:2/")).rejects.toHaveProperty("cause.name", "UnitGuardError");
  });

  it("refuses child processes, named imports included", () => {
    expect(() => execFileSync("true")).toThrow(/child_process\.execFileSync/);
    expect(() => spawn("true")).toThrow(/child_process\.spawn/);
  });
});
