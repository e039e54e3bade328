/**
 * The unit project's setup file (vitest.config.ts): a unit test opens no socket, starts no server and no
 * child process. Each of those throws UnitGuardError naming what was tried and where such a test belongs
 * (test/integration/), so a test that needs an emulator fails at once instead of waiting for one. Restored
 * after each file. MCP_UNIT_GUARD_LOG names a file that collects the test files that tried (how the tests
 * were sorted into unit and integration: by running them, not by reading them).
 */
import childProcess from "node:child_process";
import { appendFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import { afterAll, expect } from "vitest";

export class UnitGuardError extends Error {
  override readonly name = "UnitGuardError";
  constructor(
    /** What the test tried: `net.Socket.connect`, `net.Server.listen`, `child_process.spawn`... */
    readonly attempted: string,
    /** The test file, when vitest names it. */
    readonly testFile: string | undefined,
  ) {
    super(
      `${attempted}: a unit test opens no socket and starts no process (${GUARD}); ` +
        `${testFile ?? "this test file"} belongs in test/integration/`,
    );
  }
}

const GUARD = "scripts/lib/unit-guard.ts";

const CHILD_PROCESS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;

type Restore = () => void;

function refuse(attempted: string): never {
  const testFile = expect.getState().testPath;
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: read by the test process; no turbo task's cache depends on it.
  const log = process.env.MCP_UNIT_GUARD_LOG;
  if (log !== undefined && log !== "") appendFileSync(log, `${testFile ?? "?"}\t${attempted}\n`);
  throw new UnitGuardError(attempted, testFile);
}

/** Replaces `owner[key]` with a function that refuses; returns what puts it back. */
function guard(owner: object, key: string, attempted: string): Restore {
  const original: unknown = Reflect.get(owner, key);
  Reflect.set(owner, key, function guarded() {
    return refuse(attempted);
  });
  return () => Reflect.set(owner, key, original);
}

/** Installs the guard; returns what removes it. Named imports of node:child_process see it too. */
export function installUnitGuard(): Restore {
  const restores = [
    guard(net.Socket.prototype, "connect", "net.Socket.connect"),
    guard(net.Server.prototype, "listen", "net.Server.listen"),
    ...CHILD_PROCESS.map((name) => guard(childProcess, name, `child_process.${name}`)),
  ];
  syncBuiltinESMExports();
  return () => {
    for (const restore of restores) restore();
    syncBuiltinESMExports();
  };
}

const remove = installUnitGuard();
afterAll(remove);
