/**
 * The most characters of an input value that an error message or a log line repeats. An error that names
 * the value it refuses helps whoever reads it, but input is unbounded: `JSON.stringify` recurses, so a value
 * nested some thousands of levels deep throws `RangeError: Maximum call stack size exceeded` (issue 24: a
 * `specVersion` nested 5,000 levels, about 10 KB, failed the whole batch from inside the decoder), and a
 * long one makes every message and log line that repeats it as long.
 */
export const PREVIEW_MAX_CHARS = 120;

/** Containers deeper than this are shown as `[…]` or `{…}`: the walk recurses at most this far. */
const PREVIEW_MAX_DEPTH = 3;

const ELLIPSIS = "…";

/**
 * A short text for a value taken from input, for an error message or a log line: JSON-like (strings quoted,
 * containers opened a few levels deep), cut at `maxChars` characters with `…`. Never throws, whatever the
 * value (deep, long, cyclic, a getter that throws, a bigint, a symbol): the walk is bounded in depth and
 * in the characters it writes, so its cost does not grow with the input.
 */
export function previewOf(value: unknown, maxChars = PREVIEW_MAX_CHARS): string {
  const out = new BoundedText(maxChars);
  try {
    write(value, 0, out);
  } catch {
    // Only a hostile object gets here (a throwing getter or proxy trap): what was written stands.
    out.truncated = true;
  }
  return out.text();
}

/** `text` cut at `maxChars` characters with `…`: for input that is already text (a path, a key) in a message. */
export function clipText(text: string, maxChars = PREVIEW_MAX_CHARS): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}${ELLIPSIS}` : text;
}

/** Text that stops growing at its limit and remembers that it was cut. */
class BoundedText {
  #parts: string[] = [];
  #length = 0;
  truncated = false;

  constructor(readonly limit: number) {}

  get full(): boolean {
    return this.#length >= this.limit;
  }

  add(text: string): void {
    if (this.full) {
      if (text.length > 0) this.truncated = true;
      return;
    }
    const room = this.limit - this.#length;
    const kept = text.length > room ? text.slice(0, room) : text;
    if (kept.length < text.length) this.truncated = true;
    this.#parts.push(kept);
    this.#length += kept.length;
  }

  text(): string {
    const text = this.#parts.join("");
    return this.truncated ? `${text}${ELLIPSIS}` : text;
  }
}

function write(value: unknown, depth: number, out: BoundedText): void {
  if (out.full) {
    out.truncated = true;
    return;
  }
  switch (typeof value) {
    case "string":
      // Quoted as JSON would, but only what fits: the string itself may be megabytes.
      out.add(JSON.stringify(value.slice(0, out.limit)));
      if (value.length > out.limit) out.truncated = true;
      return;
    case "number":
    case "boolean":
    case "bigint":
      out.add(String(value));
      return;
    case "undefined":
      out.add("undefined");
      return;
    case "symbol":
      out.add("a symbol");
      return;
    case "function":
      out.add("a function");
      return;
  }
  if (value === null) {
    out.add("null");
    return;
  }
  const array = Array.isArray(value);
  if (depth >= PREVIEW_MAX_DEPTH) {
    out.add(array ? `[${ELLIPSIS}]` : `{${ELLIPSIS}}`);
    return;
  }
  out.add(array ? "[" : "{");
  let first = true;
  // for...in would walk the prototype chain; the own keys are what JSON would show, taken one at a time.
  const keys = array ? undefined : Object.keys(value as object);
  const count = array ? (value as unknown[]).length : (keys?.length ?? 0);
  for (let i = 0; i < count; i++) {
    if (out.full) {
      out.truncated = true;
      break;
    }
    if (!first) out.add(",");
    first = false;
    if (array) {
      write((value as unknown[])[i], depth + 1, out);
    } else {
      const key = keys?.[i] as string;
      write(key, depth + 1, out);
      out.add(":");
      write((value as Record<string, unknown>)[key], depth + 1, out);
    }
  }
  out.add(array ? "]" : "}");
}
