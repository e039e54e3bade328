/**
 * Runs `run` and returns what it wrote to stdout and stderr as JSON lines: Powertools' structured logs,
 * the SDK's warnings and the EMF metrics a handler flushes. Other lines are dropped. The streams are
 * restored whether `run` resolves or throws.
 */
export async function captureOutput<T>(
  run: () => Promise<T>,
): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const chunks: string[] = [];
  const { stdout, stderr } = process;
  const writes = [stdout.write, stderr.write] as const;
  const record = ((chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof stdout.write;
  stdout.write = record;
  stderr.write = record;
  try {
    const result = await run();
    const lines = chunks
      .flatMap((chunk) => chunk.split("\n"))
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { result, lines };
  } finally {
    [stdout.write, stderr.write] = writes;
  }
}
