import { createHash } from "node:crypto";
import { defineTool } from "@mcp-pipeline/tools/registry";

/** A pure tool: same arguments, same result, no I/O. */
export const textStats = defineTool<
  { text: string },
  { characters: number; words: number; lines: number; sha256: string }
>({
  name: "text.stats",
  description: "Counts the characters, words and lines of a text and gives its SHA-256.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", maxLength: 100_000 } },
    required: ["text"],
    additionalProperties: false,
  },
  timeoutMs: 1_000,
  concurrency: 64,
  run: async ({ text }) => ({
    characters: [...text].length,
    words: text.split(/\s+/u).filter((w) => w.length > 0).length,
    lines: text.length === 0 ? 0 : text.split(/\r\n|\r|\n/u).length,
    sha256: createHash("sha256").update(text, "utf8").digest("hex"),
  }),
});
