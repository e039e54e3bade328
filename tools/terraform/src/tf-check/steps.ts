/**
 * Named, timed steps: each prints its time as it ends, and the closing note gives them all as a table, one
 * column per root (docs/deploy.md, "Where the time goes"). Steps of different lanes (the roots, the module
 * tests) run at the same time, so the note gives each lane's start-to-end time and the wall clock besides
 * the sum of the steps.
 */
export interface StepTime {
  /** The lane the step belongs to (a root, "modules"), or CHECK for the steps before the lanes. */
  readonly lane: string;
  readonly step: string;
  /** Seconds from the check's start to the step's start. */
  readonly start: number;
  readonly seconds: number;
  readonly ok: boolean;
}

/** The lane of the steps that belong to no lane (moto's install, fmt). */
export const CHECK = "check";

export const stepName = (lane: string, step: string): string => (lane === CHECK ? step : `${lane}: ${step}`);

export class Steps {
  readonly times: StepTime[] = [];
  private readonly started: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.started = now();
  }

  async run<T>(lane: string, step: string, fn: () => Promise<T>): Promise<T> {
    const start = this.now();
    process.stdout.write(`==> ${stepName(lane, step)}\n`);
    try {
      const result = await fn();
      this.record(lane, step, start, true);
      return result;
    } catch (error) {
      this.record(lane, step, start, false);
      throw error;
    }
  }

  /** Seconds since the check started. */
  elapsed(): number {
    return (this.now() - this.started) / 1000;
  }

  private record(lane: string, step: string, start: number, ok: boolean): void {
    const seconds = (this.now() - start) / 1000;
    this.times.push({ lane, step, start: (start - this.started) / 1000, seconds, ok });
    process.stdout.write(
      `    ${ok ? "done" : "FAILED"}: ${stepName(lane, step)} in ${seconds.toFixed(1)} s\n`,
    );
  }

  summary(columns: readonly string[]): string {
    return stepTable(this.times, columns, this.elapsed());
  }
}

const fixed = (seconds: number) => seconds.toFixed(1);

/** From the first step's start to the last step's end, of the steps of one lane. */
function laneSeconds(times: readonly StepTime[]): number {
  const start = Math.min(...times.map((t) => t.start));
  return Math.max(...times.map((t) => t.start + t.seconds)) - start;
}

/**
 * The closing note: the steps of the lanes named in `columns` as a table (a row per step, in the order
 * the steps first started; "-" where a lane has no such step; FAILED after a failed step's time), each
 * column's lane time, then every other step in the order it ended, each other lane's time, the sum of the
 * steps and the wall clock.
 */
export function stepTable(times: readonly StepTime[], columns: readonly string[], wall: number): string {
  const inTable = times.filter((t) => columns.includes(t.lane));
  const rows = [...new Set([...inTable].sort((a, b) => a.start - b.start).map((t) => t.step))];
  const cell = (lane: string, step: string) => {
    const time = inTable.find((t) => t.lane === lane && t.step === step);
    if (time === undefined) return "-";
    return time.ok ? fixed(time.seconds) : `${fixed(time.seconds)} FAILED`;
  };
  const laneRow = "lane, start to end";
  const stepWidth = Math.max(24, laneRow.length, ...rows.map((r) => r.length));
  const widths = columns.map((lane) =>
    Math.max(lane.length, 7, ...rows.map((step) => cell(lane, step).length)),
  );
  const line = (first: string, cells: readonly string[]) =>
    `  ${first.padEnd(stepWidth)}${cells.map((c, i) => `  ${c.padStart(widths[i] ?? 0)}`).join("")}`;
  const lanesPresent = columns.filter((lane) => inTable.some((t) => t.lane === lane));

  const others = times.filter((t) => !columns.includes(t.lane));
  const otherWidth = Math.max(24, ...others.map((t) => stepName(t.lane, t.step).length));
  const otherLine = (name: string, seconds: number, suffix = "") =>
    `  ${name.padEnd(otherWidth)}  ${fixed(seconds).padStart(7)} s${suffix}`;
  const otherLanes = [...new Set(others.map((t) => t.lane))].filter((lane) => lane !== CHECK);
  const sum = times.reduce((s, t) => s + t.seconds, 0);

  return [
    "step times in seconds, per root (the roots run side by side):",
    line("step", columns),
    ...rows.map((step) =>
      line(
        step,
        columns.map((lane) => cell(lane, step)),
      ),
    ),
    line(
      laneRow,
      columns.map((lane) =>
        lanesPresent.includes(lane) ? fixed(laneSeconds(inTable.filter((t) => t.lane === lane))) : "-",
      ),
    ),
    "",
    "other steps (in the order they ended):",
    ...others.map((t) => otherLine(stepName(t.lane, t.step), t.seconds, t.ok ? "" : "  FAILED")),
    ...otherLanes.map((lane) =>
      otherLine(`${lane} lane, start to end`, laneSeconds(others.filter((t) => t.lane === lane))),
    ),
    otherLine("sum of the steps", sum),
    otherLine("wall clock (lanes overlap)", wall),
  ].join("\n");
}
