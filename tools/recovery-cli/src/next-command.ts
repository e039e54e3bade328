import type { NextStep, QueueName } from "./triage.js";

/** Values as a shell takes them: quoted when they hold anything but safe characters. */
const shellWord = (value: string) =>
  /^[A-Za-z0-9_./:@=+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;

const queueFlag = (q: QueueName) => ("key" in q ? `--queue ${q.key}` : `--from ${shellWord(q.url)}`);

/**
 * Where the command that printed the step was told to look by its flags (not by variables: the next
 * command runs in the same shell and reads those again). Carried on, so that the next command acts on
 * what was shown, not on what the shell's variables name.
 */
export interface NextWhere {
  readonly prefix?: string;
  readonly bucket?: string;
  readonly stream?: string;
}

const flagsOf = (where: NextWhere, names: readonly (keyof NextWhere)[]) =>
  names
    .flatMap((name) => {
      const value = where[name];
      return value === undefined ? [] : [` --${name} ${shellWord(value)}`];
    })
    .join("");

/** The command that takes the next step, as a person types it. */
export function commandFor(step: NextStep, where: NextWhere = {}): string {
  const run = "npm run recover --";
  switch (step.command) {
    case "replay":
      return `${run} replay --reason ${shellWord(step.reason)}${flagsOf(where, ["prefix", "bucket", "stream"])}`;
    case "inspect":
      return `${run} inspect --list --reason ${shellWord(step.reason)}${flagsOf(where, ["prefix", "bucket"])}`;
    case "redrive":
      return `${run} redrive ${queueFlag(step.queue)}${step.reason ? ` --reason ${shellWord(step.reason)}` : ""}${"key" in step.queue ? flagsOf(where, ["prefix"]) : ""}`;
    case "peek":
      return `${run} peek ${queueFlag(step.queue)} --reason ${shellWord(step.reason)}${"key" in step.queue ? flagsOf(where, ["prefix"]) : ""}`;
  }
}
