import { createHash } from "node:crypto";
import { Sha1Js as SdkSha1Js, Sha1Node } from "@aws-sdk/checksums/sha";
import { Md5Node, Md5Js as SdkMd5Js, Sha256Js as SdkSha256Js, Sha256Node } from "@smithy/core/checksum";
import { describe, expect, it } from "vitest";
import { Md5Js, noJsHash, Sha1Js, Sha256Js } from "../../src/without-js-hashes.js";

// What a function's bundle holds in place of the SDK's JavaScript hashes (tools/bundler/src/bundle-function.ts),
// and why nothing a function runs needs them: on this Node, as on Lambda's, the SDK's Node classes are built on
// node:crypto. A Node whose crypto lacked one would make the SDK choose its fallback, and this test fail.

const bytes = new TextEncoder().encode("a tool call's result");
const hex = (digest: Uint8Array) => Buffer.from(digest).toString("hex");

describe("the SDK's hashes on Node", () => {
  it.each([
    ["SHA-256", Sha256Node, SdkSha256Js, "sha256"],
    ["MD5", Md5Node, SdkMd5Js, "md5"],
    ["SHA-1", Sha1Node, SdkSha1Js, "sha1"],
  ] as const)("%s is node:crypto's, not the JavaScript fallback", async (_, Node, Js, algorithm) => {
    expect(Node).not.toBe(Js);
    const hash = new Node();
    hash.update(bytes);
    expect(hex(await hash.digest())).toBe(createHash(algorithm).update(bytes).digest("hex"));
  });
});

describe("the bundles' stand-ins for the JavaScript fallbacks", () => {
  it.each([
    ["SHA-256", Sha256Js],
    ["MD5", Md5Js],
    ["SHA-1", Sha1Js],
  ] as const)("%s: building one fails with the cause", (algorithm, StandIn) => {
    expect(() => new StandIn()).toThrow(noJsHash(algorithm));
  });
});
