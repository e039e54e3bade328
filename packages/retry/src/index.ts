export { type Backoff, backoffDelayMs, Jitter } from "./backoff.js";
export { type RetryOptions, retry } from "./retry.js";
export { seededRandom } from "./seeded-random.js";
export { type Sleep, sleep } from "./sleep.js";
