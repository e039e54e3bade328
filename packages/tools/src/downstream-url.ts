import { PermanentError, urlForLogs } from "@mcp-pipeline/contracts";

/**
 * Keeps the `http.request` tool on its configured downstream. A job gives only a path, and the path must
 * not take the request anywhere else: not to another host (the instance metadata service at
 * 169.254.169.254, the Lambda Runtime API at 127.0.0.1:9001, any site), and not outside the base URL's
 * path (`/api` must not reach `/admin`).
 *
 * `new URL(path, base)` cannot do that: it resolves the path as a reference, so `http://other/`,
 * `\\other` and `http:\\other` (WHATWG URL reads `\` as `/` in http and https URLs) name another host, and
 * `../` and `%2e%2e/` (a percent-encoded dot segment is still a dot segment) leave the base path. Here the
 * path is appended to the base path as text, after it is checked segment by segment; the URL that results
 * is checked again (withinBase), and so is every redirect's.
 */

/** Why a job's path or a redirect was refused; the same path is refused every time, so permanent. */
export const PathRefusal = {
  /** A backslash: read as `/` by URL parsers, and by some servers. */
  Backslash: "backslash",
  /** A control character or a space: URL parsers drop tabs and newlines, servers disagree on the rest. */
  ControlCharacter: "control-character",
  /** `#`: a fragment is never sent, so what follows it would silently not be part of the request. */
  Fragment: "fragment",
  /** `//` inside the path: servers and proxies merge them, and a leading one is a host to URL parsers. */
  EmptySegment: "empty-segment",
  /**
   * `.` or `..`, plainly or percent-encoded (`%2e`), also with path parameters (`..;x`, which Tomcat and
   * Jetty read as `..`) or encoded twice (`%252e`): a way out of the base path.
   */
  DotSegment: "dot-segment",
  /**
   * `%2f` or `%5c` (an encoded `/` or `\`), or `%00`, also encoded twice (`%252f`): servers that decode
   * them see other segments.
   */
  EncodedSeparator: "encoded-separator",
  /** A `%` not followed by two hex digits. */
  MalformedEscape: "malformed-escape",
  /** The URL that results (or a redirect's) is on another origin or outside the base path. */
  OutsideBase: "outside-base",
} as const;
export type PathRefusal = (typeof PathRefusal)[keyof typeof PathRefusal];

/** A job's path that would take the request off the configured downstream: nothing was sent. */
export class DownstreamPathError extends PermanentError {
  readonly reason: PathRefusal;

  constructor(reason: PathRefusal, message: string) {
    super("http-path-refused", `http.request: ${message}; nothing was sent`);
    this.name = "DownstreamPathError";
    this.reason = reason;
  }
}

/** A redirect off the configured downstream, or too many of them: not followed. */
export class DownstreamRedirectError extends PermanentError {
  readonly status: number;

  constructor(status: number, message: string) {
    super("http-redirect-refused", `http.request: a ${status} redirect ${message}; not followed`);
    this.name = "DownstreamRedirectError";
    this.status = status;
  }
}

/** The configured downstream: an origin and a path prefix, without the trailing `/`. */
export interface DownstreamBase {
  readonly origin: string;
  /** `""` for a base at the host's root, else `/api` (never ending in `/`). */
  readonly path: string;
}

export function downstreamBase(baseUrl: string): DownstreamBase {
  const url = new URL(baseUrl);
  return { origin: url.origin, path: url.pathname.replace(/\/+$/, "") };
}

/** The base URL's own text: `https://host/api`. */
export function baseText(base: DownstreamBase): string {
  return `${base.origin}${base.path}`;
}

// Hex pairs that decode to `.`, `/`, `\`, NUL and `;`; `%25` is `%` itself (a second encoding).
const ENCODED_DOT = /%2e/gi;
const ENCODED_SEPARATOR = /%(2f|5c|00)/i;
const ENCODED_PERCENT = /%25/gi;
const ENCODED_SEMICOLON = /%3b/gi;
const ESCAPE = /%(?![0-9a-f]{2})/i;
// C0 controls, space and DEL; the schema already refuses whitespace, this holds without it.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters refused are control characters.
const CONTROL = /[\u0000-\u0020\u007f]/;

function refuse(reason: PathRefusal, message: string): never {
  throw new DownstreamPathError(reason, message);
}

/** Checks each segment of a job's path (before any `?`): see PathRefusal for what is refused and why. */
function checkSegments(pathPart: string): void {
  const segments = pathPart.slice(1).split("/");
  segments.forEach((segment, i) => {
    const at = `segment ${i + 1} of the path`;
    // A trailing slash (`/items/`) is an empty last segment, and fine.
    if (segment === "" && i < segments.length - 1) refuse(PathRefusal.EmptySegment, `${at} is empty (//)`);
    if (ESCAPE.test(segment)) refuse(PathRefusal.MalformedEscape, `${at} has a % without two hex digits`);
    const refusal = segmentRefusal(segment);
    if (refusal === PathRefusal.EncodedSeparator)
      refuse(
        refusal,
        `${at} holds an encoded /, \\ or NUL (%2f, %5c, %00, %25 before them, or a character NFKC turns into / or \\)`,
      );
    if (refusal === PathRefusal.DotSegment)
      refuse(refusal, `${at} is a dot segment (., .., %2e, with ;parameters, encoded twice, or by NFKC)`);
  });
}

/**
 * What a segment is to the servers that read it in each of these ways: as sent; decoded twice (a proxy,
 * then the server); and decoded, then Unicode-compatibility normalised (NFKC: `．` U+FF0E is `.`, `／`
 * U+FF0F is `/`), as some frameworks do before they route.
 */
function segmentRefusal(segment: string): PathRefusal | undefined {
  const forms = [segment, segment.replace(ENCODED_PERCENT, "%")];
  const decoded = URI_DECODE(segment);
  if (decoded !== undefined) forms.push(decoded.normalize("NFKC"));
  for (const form of forms) {
    if (ENCODED_SEPARATOR.test(form) || /[/\\]/.test(form)) return PathRefusal.EncodedSeparator;
    if (isDotSegment(form)) return PathRefusal.DotSegment;
  }
  return undefined;
}

/** decodeURIComponent, or undefined for an escape that is not UTF-8 (kept as sent, checked as sent). */
const URI_DECODE = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};

/**
 * Whether a segment is `.` or `..` to some server: percent-encoded dots decoded, and path parameters
 * (`;` and what follows, RFC 3986 section 3.3) dropped, as Tomcat and Jetty do before they normalise the path.
 */
function isDotSegment(segment: string): boolean {
  const bare = segment.replace(ENCODED_DOT, ".").replace(ENCODED_SEMICOLON, ";").split(";")[0];
  return bare === "." || bare === "..";
}

/**
 * The URL a job's path names under the base: `{base}{path}`, the query kept. Throws DownstreamPathError
 * (permanent) for a path that could leave the base, before anything is sent. Messages never repeat the
 * path: its query may hold a token (redact.ts in @mcp-pipeline/contracts).
 */
export function resolveJobPath(base: DownstreamBase, path: string): URL {
  if (!path.startsWith("/")) refuse(PathRefusal.OutsideBase, "the path does not start with /");
  if (path.includes("\\")) refuse(PathRefusal.Backslash, "the path holds a backslash");
  if (CONTROL.test(path)) refuse(PathRefusal.ControlCharacter, "the path holds a control character or space");
  if (path.includes("#")) refuse(PathRefusal.Fragment, "the path holds a fragment (#)");
  const query = path.indexOf("?");
  checkSegments(query === -1 ? path : path.slice(0, query));
  const url = new URL(`${baseText(base)}${path}`);
  if (!withinBase(base, url)) refuse(PathRefusal.OutsideBase, `it resolves outside ${baseText(base)}`);
  return url;
}

/**
 * Whether a URL is on the base's origin, without credentials, and at or under the base path. What the
 * request is sent to is held to this whatever built it: the job's path and every redirect.
 */
export function withinBase(base: DownstreamBase, url: URL): boolean {
  if (url.origin !== base.origin || url.username !== "" || url.password !== "") return false;
  if (base.path === "") return true;
  return url.pathname === base.path || url.pathname.startsWith(`${base.path}/`);
}

/**
 * Where a redirect's `Location` points, resolved against the URL that answered it as fetch would; refused
 * unless it is within the base (DownstreamRedirectError). Its query is not shown.
 */
export function redirectTarget(
  base: DownstreamBase,
  from: URL,
  status: number,
  location: string | null,
): URL {
  if (location === null || location === "") throw new DownstreamRedirectError(status, "has no Location");
  const target = URL.parse(location, from.href);
  if (target === null) throw new DownstreamRedirectError(status, "has a Location that is not a URL");
  if (!withinBase(base, target) || target.pathname.split("/").some((segment) => segmentRefusal(segment)))
    throw new DownstreamRedirectError(status, `points outside ${baseText(base)} (to ${urlForLogs(target)})`);
  return target;
}
