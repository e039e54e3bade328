import { failureCodeOf, failureKindOf } from "@mcp-pipeline/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DownstreamPathError,
  downstreamBase,
  PathRefusal,
  redirectTarget,
  resolveJobPath,
  withinBase,
} from "../../src/downstream-url.js";

// The URL resolution alone (no network): every path of issue 25 item 8 with the real hosts it names.
const base = downstreamBase("https://api.example.com/v1");

const refusal = (path: string) => {
  try {
    return `sent to ${resolveJobPath(base, path).href}`;
  } catch (error) {
    expect(error).toBeInstanceOf(DownstreamPathError);
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual(["permanent", "http-path-refused"]);
    return (error as DownstreamPathError).reason;
  }
};

describe("resolveJobPath: a job's path under the base URL, or refused", () => {
  it.each([
    ["/http://169.254.169.254/latest/meta-data/iam/security-credentials/", PathRefusal.EmptySegment],
    ["/\\\\evil.com/x", PathRefusal.Backslash],
    ["/\\evil.com/x", PathRefusal.Backslash],
    ["/http:\\\\127.0.0.1:9001/2018-06-01/runtime/invocation/next", PathRefusal.Backslash],
    ["/../admin", PathRefusal.DotSegment],
    ["/%2e%2e/admin", PathRefusal.DotSegment],
    ["/%2E%2e/admin", PathRefusal.DotSegment],
    ["/.%2E/admin", PathRefusal.DotSegment],
    ["/x/./y", PathRefusal.DotSegment],
    ["/x/..", PathRefusal.DotSegment],
    ["//evil.com", PathRefusal.EmptySegment],
    ["//evil.com/x", PathRefusal.EmptySegment],
    ["/x//y", PathRefusal.EmptySegment],
    ["/%2f..%2fadmin", PathRefusal.EncodedSeparator],
    ["/x%2Fy", PathRefusal.EncodedSeparator],
    ["/x%5cy", PathRefusal.EncodedSeparator],
    ["/x%00", PathRefusal.EncodedSeparator],
    ["/%zz", PathRefusal.MalformedEscape],
    ["/x%2", PathRefusal.MalformedEscape],
    ["/x#@evil.com", PathRefusal.Fragment],
    ["/x\ty", PathRefusal.ControlCharacter],
    ["/x\ny", PathRefusal.ControlCharacter],
    ["/x y", PathRefusal.ControlCharacter],
    ["/x\u007f", PathRefusal.ControlCharacter],
    // A dot segment with path parameters: Tomcat and Jetty strip `;...` before normalising, so the
    // downstream reads `/..;/admin` as `/../admin`.
    ["/..;/admin", PathRefusal.DotSegment],
    ["/items/..;jsessionid=1/admin", PathRefusal.DotSegment],
    ["/%2e%2e;/admin", PathRefusal.DotSegment],
    ["/..%3b/admin", PathRefusal.DotSegment],
    ["/.;x/admin", PathRefusal.DotSegment],
    // Encoded twice: a server that decodes twice (or a proxy and then the server) sees `..` or `/`.
    ["/%252e%252e/admin", PathRefusal.DotSegment],
    ["/%252E./admin", PathRefusal.DotSegment],
    ["/x%252fy", PathRefusal.EncodedSeparator],
    ["/x%255cy", PathRefusal.EncodedSeparator],
    // Characters that Unicode compatibility normalisation (NFKC) turns into `.`, `/` or `\`: a server that
    // normalises the decoded path reads `．．` (fullwidth dots) as `..`, `／` as a separator.
    ["/\uff0e\uff0e/admin", PathRefusal.DotSegment],
    ["/%EF%BC%8E%EF%BC%8E/admin", PathRefusal.DotSegment],
    ["/\u2025/admin", PathRefusal.DotSegment],
    ["/evil.com\uff0fx", PathRefusal.EncodedSeparator],
    ["/x%EF%BC%BCy", PathRefusal.EncodedSeparator],
    ["http://evil.com/", PathRefusal.OutsideBase],
    ["", PathRefusal.OutsideBase],
  ])("%j is refused: %s", (path, reason) => {
    expect(refusal(path)).toBe(reason);
  });

  it.each([
    ["/items", "https://api.example.com/v1/items"],
    ["/", "https://api.example.com/v1/"],
    ["/items/", "https://api.example.com/v1/items/"],
    [
      "/items?next=../../admin&u=http://169.254.169.254/",
      "https://api.example.com/v1/items?next=../../admin&u=http://169.254.169.254/",
    ],
    ["/@evil.com", "https://api.example.com/v1/@evil.com"],
    ["/:443@evil.com/x", "https://api.example.com/v1/:443@evil.com/x"],
    ["/...", "https://api.example.com/v1/..."],
    ["/%2e%2e%2e", "https://api.example.com/v1/%2e%2e%2e"],
    ["/caf%C3%A9", "https://api.example.com/v1/caf%C3%A9"],
    ["/café", "https://api.example.com/v1/caf%C3%A9"],
    ["/x\u2215y", "https://api.example.com/v1/x%E2%88%95y"],
  ])("%j is sent to %s", (path, href) => {
    expect(resolveJobPath(base, path).href).toBe(href);
  });

  it("a base at the host's root takes any path that passes, on its host", () => {
    const root = downstreamBase("http://127.0.0.1:8080/");
    expect(resolveJobPath(root, "/admin").href).toBe("http://127.0.0.1:8080/admin");
    expect(() => resolveJobPath(root, "/http://169.254.169.254/")).toThrow(DownstreamPathError);
  });

  it("whatever the path, what is sent is on the base's origin and under its path", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({
            unit: fc.constantFrom(
              "/",
              ".",
              "\\",
              "%",
              "2",
              "e",
              "f",
              "5",
              "c",
              ":",
              "@",
              "?",
              "#",
              "a",
              "h",
              "t",
              "p",
            ),
          }),
          fc.webPath(),
          fc.webUrl().map((u) => `/${u}`),
        ),
        (tail) => {
          const path = tail.startsWith("/") ? tail : `/${tail}`;
          let url: URL;
          try {
            url = resolveJobPath(base, path);
          } catch (error) {
            expect(error).toBeInstanceOf(DownstreamPathError);
            return;
          }
          expect(url.origin).toBe("https://api.example.com");
          expect(url.pathname.startsWith("/v1/")).toBe(true);
          expect(url.pathname.split("/")).not.toContain("..");
        },
      ),
      { numRuns: 5_000 },
    );
  });
});

describe("withinBase: the check every target passes", () => {
  it.each([
    ["https://api.example.com/v1/x", true],
    ["https://api.example.com/v1", true],
    ["https://api.example.com/v10", false],
    ["https://api.example.com/admin", false],
    ["http://api.example.com/v1/x", false],
    ["https://api.example.com:8443/v1/x", false],
    ["https://user:pw@api.example.com/v1/x", false],
    ["http://169.254.169.254/latest/meta-data/", false],
  ])("%s: %s", (href, within) => {
    expect(withinBase(base, new URL(href))).toBe(within);
  });
});

describe("redirectTarget: a Location followed only within the base", () => {
  const from = new URL("https://api.example.com/v1/items");
  it.each([
    ["/v1/items/7", "https://api.example.com/v1/items/7"],
    ["items/7", "https://api.example.com/v1/items/7"],
    ["https://api.example.com/v1/other?x=1", "https://api.example.com/v1/other?x=1"],
  ])("%s is followed to %s", (location, href) => {
    expect(redirectTarget(base, from, 302, location).href).toBe(href);
  });

  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "//evil.com/x",
    "/admin",
    "/v1/../admin",
    "../admin",
    "/v1/%2f..%2fadmin",
    "/v1/..;/admin",
    "/v1/%2e%2e;x/admin",
    "/v1/%252e%252e/admin",
    "https://user:pw@api.example.com/v1/x",
    "",
  ])("%j is refused (permanent, http-redirect-refused)", (location) => {
    const error = (() => {
      try {
        return redirectTarget(base, from, 302, location);
      } catch (e) {
        return e;
      }
    })();
    expect([failureKindOf(error), failureCodeOf(error)]).toEqual(["permanent", "http-redirect-refused"]);
  });
});
