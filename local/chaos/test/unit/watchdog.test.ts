import { describe, expect, it } from "vitest";
import { TimeoutCause, Watchdog } from "../../src/watchdog.js";

describe("the chaos run's watchdog", () => {
  it("lets a run that keeps moving go on until its deadline, however long it takes", () => {
    // Prepare
    const watchdog = new Watchdog(10_000, 1_000, 0);

    // Act: something moves every 900 ms, never 1,000 ms apart
    const verdicts: (TimeoutCause | undefined)[] = [];
    for (let now = 0; now <= 10_800; now += 900) {
      watchdog.observe(`invocations ${now}`, now);
      verdicts.push(watchdog.expired(now));
    }

    // Assess
    expect(verdicts.at(-1)).toBe(TimeoutCause.Deadline);
    expect(verdicts.slice(0, -1).every((v) => v === undefined)).toBe(true);
  });

  it("stops a run where nothing moved for longer than the stall limit, well before its deadline", () => {
    // Prepare
    const watchdog = new Watchdog(900_000, 120_000, 0);
    watchdog.observe("1 open, 59 invocations", 30_000);

    // Act: the same state is seen again and again
    watchdog.observe("1 open, 59 invocations", 100_000);
    const at150 = watchdog.expired(150_000);
    const at151 = watchdog.expired(150_001);

    // Assess
    expect(at150).toBeUndefined();
    expect(at151).toBe(TimeoutCause.NoProgress);
    expect(watchdog.quietMs(150_001)).toBe(120_001);
  });

  it("counts the wait before the first observation as quiet time", () => {
    const watchdog = new Watchdog(900_000, 60_000, 1_000);
    expect(watchdog.expired(61_000)).toBeUndefined();
    expect(watchdog.expired(61_001)).toBe(TimeoutCause.NoProgress);
  });
});
