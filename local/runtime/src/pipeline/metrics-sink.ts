/**
 * Reads the functions' stdout as CloudWatch would: lines in the Embedded Metric Format become metrics,
 * summed per function (Count) or kept as a maximum (Milliseconds). Every other line is a log line.
 */
export class MetricsSink {
  readonly #sums = new Map<string, Map<string, number>>();
  readonly #maxima = new Map<string, Map<string, number>>();

  /** True when the line was EMF (consumed), false when it is a log line. */
  accept(functionName: string, line: string): boolean {
    if (!line.startsWith("{") || !line.includes('"CloudWatchMetrics"')) return false;
    let document: {
      _aws?: { CloudWatchMetrics?: { Metrics?: { Name: string; Unit?: string }[] }[] };
      [key: string]: unknown;
    };
    try {
      document = JSON.parse(line);
    } catch {
      return false;
    }
    const definitions = document._aws?.CloudWatchMetrics?.flatMap((d) => d.Metrics ?? []) ?? [];
    for (const { Name, Unit } of definitions) {
      const raw = document[Name];
      const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is number => typeof v === "number");
      for (const value of values) {
        const table = Unit === "Milliseconds" ? this.#maxima : this.#sums;
        const metrics = table.get(functionName) ?? new Map<string, number>();
        table.set(functionName, metrics);
        const current = metrics.get(Name) ?? (Unit === "Milliseconds" ? Number.NEGATIVE_INFINITY : 0);
        metrics.set(Name, Unit === "Milliseconds" ? Math.max(current, value) : current + value);
      }
    }
    return true;
  }

  /** The sum of a Count metric over every function whose name ends with `suffix`. */
  sum(suffix: string, metric: string): number {
    let total = 0;
    for (const [fn, metrics] of this.#sums) if (fn.endsWith(suffix)) total += metrics.get(metric) ?? 0;
    return total;
  }

  max(suffix: string, metric: string): number {
    let best = 0;
    for (const [fn, metrics] of this.#maxima)
      if (fn.endsWith(suffix)) best = Math.max(best, metrics.get(metric) ?? 0);
    return best;
  }
}
