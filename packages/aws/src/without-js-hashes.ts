// What a function's bundle holds in place of the SDK's JavaScript hash implementations: tools/bundler
// (bundle-function.ts) resolves @smithy/core's Sha256Js and Md5Js and @aws-sdk/checksums' Sha1Js to this
// module. Each is the fallback of a Node class (Sha256Node, Md5Node, Sha1Node) for a Node whose crypto lacks
// the algorithm; the Node class decides at load, by calling createHash, and Lambda's Node 22 has all three
// (packages/aws/test/unit/without-js-hashes.test.ts holds the SDK to choosing node:crypto here). The fallbacks
// were about 7.6 KiB of every zip and of every import (docs/benchmarks/cold-start.md). A Node without one of
// them (an OpenSSL in FIPS mode has no MD5) gets a class that fails with the cause when a hash is built, not
// a hash computed another way. Tests and tools run the SDK's own modules.

/** Why a hash cannot be built: node:crypto lacks the algorithm, and the bundle left the fallback out. */
export const noJsHash = (algorithm: string) =>
  `node:crypto has no ${algorithm} in this Node, and a function's bundle holds no JavaScript ${algorithm} ` +
  "(tools/bundler leaves out the SDK's fallbacks: packages/aws/src/without-js-hashes.ts)";

/** In place of @smithy/core's `Sha256Js`. */
export class Sha256Js {
  constructor() {
    throw new Error(noJsHash("SHA-256"));
  }
}

/** In place of @smithy/core's `Md5Js`. */
export class Md5Js {
  constructor() {
    throw new Error(noJsHash("MD5"));
  }
}

/** In place of @aws-sdk/checksums' `Sha1Js`. */
export class Sha1Js {
  constructor() {
    throw new Error(noJsHash("SHA-1"));
  }
}
