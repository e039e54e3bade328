/**
 * What logs and stored errors may say about what came from outside. Error messages end up in CloudWatch
 * Logs, in the tool-calls table (a failed call's error), in lifecycle events, in quarantine records and in
 * DLQ message attributes, all of them read by more people and kept longer than the data they describe: a
 * message names what went wrong and where, never the data itself.
 */

/**
 * A URL as an error may show it: scheme, host, port and path. Userinfo (`user:password@`), the query
 * (`?token=...`, signed-URL signatures) and the fragment are left out, whatever they hold.
 */
export function urlForLogs(url: URL | string): string {
  const parsed = typeof url === "string" ? URL.parse(url) : url;
  if (parsed === null) return "(not a URL)";
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * Why `JSON.parse` refused a text, without the text. V8 quotes the payload around the first bad token
 * (`Unexpected token 'a', "{"password":a…" is not valid JSON`); its other messages name only a position
 * (`Expected ',' or '}' after property value in JSON at position 23 (line 1 column 24)`), and are kept.
 */
export function jsonErrorForLogs(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!message.includes('"') && /JSON/.test(message)) return message;
  return "unexpected token (the text is not shown)";
}
