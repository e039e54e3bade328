/**
 * Named, timed steps: each prints its time as it ends, and the closing note lists them all. Steps of
 * different lanes (the roots, the module tests) run at the same time, so each line names its step and the
 * note gives the wall-clock time besides the sum of the steps.
 */
export interface StepTime {
  readonly name: string;
  readonly seconds: number;
  readonly ok: boolean;
}

export class Steps {
  readonly times: StepTime[] = [];
  private readonly started = performance.now();

  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const start = performance.now();
    process.stdout.write(`==> ${name}\n`);
    try {
      const result = await fn();
      this.record(name, start, true);
      return result;
    } catch (error) {
      this.record(name, start, false);
      throw error;
    }
  }

  private record(name: string, start: number, ok: boolean): void {
    const seconds = (performance.now() - start) / 1000;
    this.times.push({ name, seconds, ok });
    process.stdout.write(`    ${ok ? "done" : "FAILED"}: ${name} in ${seconds.toFixed(1)} s\n`);
  }

  summary(): string {
    const width = Math.max(...this.times.map((t) => t.name.length), 24);
    const sum = this.times.reduce((s, t) => s + t.seconds, 0);
    const wall = (performance.now() - this.started) / 1000;
    const line = (name: string, seconds: number, suffix = "") =>
      `  ${name.padEnd(width)}  ${seconds.toFixed(1).padStart(7)} s${suffix}`;
    return [
      "step times (in the order they ended):",
      ...this.times.map((t) => line(t.name, t.seconds, t.ok ? "" : "  FAILED")),
      line("sum of the steps", sum),
      line("wall clock (lanes overlap)", wall),
    ].join("\n");
  }
}
