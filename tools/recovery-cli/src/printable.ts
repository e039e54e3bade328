/**
 * Text from a queue or a record (a job's body, a failure's message), made safe to print on a person's
 * terminal: anyone's input reaches a DLQ, and SQS takes line feeds, carriage returns and every character
 * from U+0020 up. Printed raw, a line feed starts a line that reads as one of ours, a carriage return
 * writes over the line shown, and bidirectional overrides reorder what is read. Each is shown as its
 * escape (`\n`, `\r`, `\u202e`), the rest as it is (a backslash too: a JSON body's own `\n` reads the same,
 * and means the same); `--json` prints the text itself (JSON escapes it).
 */
const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

// C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and isolates.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(
    UNSAFE,
    (c) => NAMED[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}
