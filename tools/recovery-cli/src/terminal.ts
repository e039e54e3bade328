import { createInterface } from "node:readline/promises";

/** Where a command asks before acting. `interactive` is false when no person can answer (a pipe, CI). */
export interface Terminal {
  readonly interactive: boolean;
  ask(question: string): Promise<string>;
}

/** The process's own: interactive when stdin and stderr are terminals; the question goes to stderr. */
export function processTerminal(): Terminal {
  return {
    interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
    ask: async (question) => {
      const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      try {
        return await prompt.question(question);
      } catch (error) {
        // Ctrl-C (or Ctrl-D) at the question: readline rejects with an AbortError. Not a yes: nothing is done.
        if ((error as Error).name === "AbortError") return "";
        throw error;
      } finally {
        prompt.close();
      }
    },
  };
}

/** Why an operation that changes state may go on, or why not. */
export type Consent = "given" | "declined" | "no-terminal";

/** `--yes`, or a person at a terminal typing yes. */
export async function consent(terminal: Terminal, yes: boolean, question: string): Promise<Consent> {
  if (yes) return "given";
  if (!terminal.interactive) return "no-terminal";
  const answer = (await terminal.ask(`${question} Type yes to go on: `)).trim().toLowerCase();
  return answer === "yes" || answer === "y" ? "given" : "declined";
}
