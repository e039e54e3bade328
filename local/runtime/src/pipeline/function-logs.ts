/**
 * What `--verbose` shows of the functions' logs. The functions log as Lambda's runtime lets them (the
 * JSON format at INFO, docs/aws-semantics.md §9.4): every invocation's summary is an INFO line. The
 * terminal shows the warnings and errors; nothing is filtered out of what the functions write.
 */

const SHOWN = new Set(["WARN", "WARNING", "ERROR", "CRITICAL", "FATAL"]);

/** A log line's level: a JSON line's `level`, or the text format's third tab-separated field. */
export function logLevelOf(line: string): string | undefined {
  if (line.startsWith("{")) {
    try {
      const level = (JSON.parse(line) as { level?: unknown }).level;
      return typeof level === "string" ? level.toUpperCase() : undefined;
    } catch {
      return undefined;
    }
  }
  const field = line.split("\t")[2];
  return field !== undefined && /^[A-Z]+$/.test(field) ? field : undefined;
}

/** Warnings and errors, and lines of no level a log format gives (a crash's output): shown. */
export function shownByVerbose(line: string): boolean {
  const level = logLevelOf(line);
  return level === undefined || SHOWN.has(level);
}
