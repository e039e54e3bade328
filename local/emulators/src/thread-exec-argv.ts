/**
 * The Node options a worker thread that runs plain JavaScript (an emulator host, a Lambda sandbox) gets
 * from its parent: the parent's, less the module loaders it was started with. Under `tsx` (npm start,
 * vitest), the parent's `--import`/`--require` register a TypeScript loader; inherited, every thread would
 * register it again and run each of its imports through it, which made a sandbox's cold start several
 * times slower (docs/benchmarks/local-pipeline.md). Profiling and warning flags are kept.
 */
const LOADER_FLAGS = new Set(["--import", "--require", "-r", "--loader", "--experimental-loader"]);

export function threadExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i] as string;
    const [flag] = arg.split("=", 1);
    if (flag !== undefined && LOADER_FLAGS.has(flag)) {
      // `--import x` takes the next argument; `--import=x` does not.
      if (!arg.includes("=")) i++;
      continue;
    }
    kept.push(arg);
  }
  return kept;
}
