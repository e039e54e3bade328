/**
 * Runs `run` with stdout and stderr captured, each write handed to `write`; the streams are restored
 * whether `run` resolves or throws.
 */
async function intercepting<T>(run: () => Promise<T>, write: (stream: "out" | "err", chunk: string) => void) {
  const { stdout, stderr } = process;
  const writes = [stdout.write, stderr.write] as const;
  const to = (stream: "out" | "err") =>
    ((chunk: unknown) => {
      write(stream, String(chunk));
      return true;
    }) as typeof stdout.write;
  stdout.write = to("out");
  stderr.write = to("err");
  try {
    return await run();
  } finally {
    [stdout.write, stderr.write] = writes;
  }
}

/**
 * Runs `run` and returns what it wrote to stdout and stderr as JSON lines: Powertools' structured logs,
 * the SDK's warnings and the EMF metrics a handler flushes. Other lines are dropped.
 */
export async function captureOutput<T>(
  run: () => Promise<T>,
): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const chunks: string[] = [];
  const result = await intercepting(run, (_, chunk) => chunks.push(chunk));
  const lines = chunks
    .flatMap((chunk) => chunk.split("\n"))
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { result, lines };
}

/** Runs `run` (a command line's `main`) and returns what it wrote to stdout and to stderr, as text. */
export async function captureStreams<T>(
  run: () => Promise<T>,
): Promise<{ result: T; out: string; err: string }> {
  const text = { out: "", err: "" };
  const result = await intercepting(run, (stream, chunk) => {
    text[stream] += chunk;
  });
  return { result, ...text };
}
