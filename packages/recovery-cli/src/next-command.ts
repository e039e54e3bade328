import type { NextStep, QueueName } from "./triage.js";

/** Values as a shell takes them: quoted when they hold anything but safe characters. */
const shellWord = (value: string) =>
  /^[A-Za-z0-9_./:@=+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;

const queueFlag = (q: QueueName) => ("key" in q ? `--queue ${q.key}` : `--from ${shellWord(q.url)}`);

/** The command that takes the next step, as a person types it. */
export function commandFor(step: NextStep): string {
  const run = "npm run recover --";
  switch (step.command) {
    case "replay":
      return `${run} replay --reason ${shellWord(step.reason)}`;
    case "inspect":
      return `${run} inspect --list --reason ${shellWord(step.reason)}`;
    case "redrive":
      return `${run} redrive ${queueFlag(step.queue)}${step.reason ? ` --reason ${shellWord(step.reason)}` : ""}`;
    case "peek":
      return `${run} peek ${queueFlag(step.queue)} --reason ${shellWord(step.reason)}`;
  }
}
