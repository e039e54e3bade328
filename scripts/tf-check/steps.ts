/** Named, timed steps: each prints its time as it ends, and the closing note lists them all. */
export interface StepTime {
  readonly name: string;
  readonly seconds: number;
  readonly ok: boolean;
}

export class Steps {
  readonly times: StepTime[] = [];

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
    process.stdout.write(`    ${ok ? "done" : "FAILED"} in ${seconds.toFixed(1)} s\n`);
  }

  summary(): string {
    const width = Math.max(...this.times.map((t) => t.name.length), 10);
    const total = this.times.reduce((s, t) => s + t.seconds, 0);
    return [
      "step times:",
      ...this.times.map(
        (t) => `  ${t.name.padEnd(width)}  ${t.seconds.toFixed(1).padStart(7)} s${t.ok ? "" : "  FAILED"}`,
      ),
      `  ${"total".padEnd(width)}  ${total.toFixed(1).padStart(7)} s`,
    ].join("\n");
  }
}
