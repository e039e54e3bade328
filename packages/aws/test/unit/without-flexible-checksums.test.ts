import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { HttpResponse } from "@smithy/core/protocols";
import type { HttpRequest } from "@smithy/types";
import { describe, expect, it } from "vitest";
import { s3Client } from "../../src/s3-client.js";
import {
  type FlexibleChecksumsOperation,
  getFlexibleChecksumsPlugin,
  NO_FLEXIBLE_CHECKSUMS,
} from "../../src/without-flexible-checksums.js";

// What a function's bundle holds in place of the S3 client's flexible-checksums plugin
// (tools/bundler/src/bundle-function.ts); scripts/test/integration/build.test.ts runs the bundles' S3 writes
// against the emulator. Here, on a real S3 client whose HTTP handler records the request instead of sending it
// (no socket): what @mcp-pipeline/aws's client sends without the stand-in, and which requests the stand-in lets
// through or refuses.

const options = {
  region: "eu-west-1",
  endpoint: "http://127.0.0.1:1",
  credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
};

/** An S3 client whose requests are recorded and answered 200 with an empty body. */
function recording(client: S3Client): HttpRequest[] {
  const sent: HttpRequest[] = [];
  (client.config as { requestHandler: unknown }).requestHandler = {
    handle: async (request: HttpRequest) => {
      sent.push(request);
      return { response: new HttpResponse({ statusCode: 200, headers: {}, body: Readable.from([]) }) };
    },
  };
  return sent;
}

// As the generated S3 commands describe themselves to the plugin (@aws-sdk/client-s3's commandBuilder.js).
const PUT_OBJECT: FlexibleChecksumsOperation = {
  requestChecksumRequired: false,
  requestAlgorithmMember: { name: "ChecksumAlgorithm", httpHeader: "x-amz-sdk-checksum-algorithm" },
};
const GET_OBJECT: FlexibleChecksumsOperation = {
  requestChecksumRequired: false,
  requestValidationModeMember: "ChecksumMode",
};
const DELETE_OBJECTS: FlexibleChecksumsOperation = { ...PUT_OBJECT, requestChecksumRequired: true };

const put = new PutObjectCommand({ Bucket: "results", Key: "results/c/r.json", Body: '{"ok":true}' });
const checksumHeaders = (request: HttpRequest) =>
  Object.keys(request.headers).filter((h) => h.includes("checksum"));

describe("S3 flexible checksums in a function", () => {
  it("the S3 client sends a PutObject without a flexible checksum, its body signed by its SHA-256", async () => {
    const client = s3Client(options);
    const sent = recording(client);
    await client.send(put);
    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request && checksumHeaders(request)).toEqual([]);
    // What makes the checksum redundant: S3 refuses a body whose SHA-256 is not the signed one.
    expect(request?.headers["x-amz-content-sha256"]).toBe(
      createHash("sha256").update('{"ok":true}').digest("hex"),
    );
  });

  it("the SDK's default would have added a CRC32: what the stand-in must refuse rather than drop", async () => {
    const client = new S3Client({ ...options, forcePathStyle: true });
    const sent = recording(client);
    await client.send(put);
    expect(sent[0] && checksumHeaders(sent[0])).toContain("x-amz-checksum-crc32");
  });

  it("the stand-in lets through what the SDK's plugin leaves as it is, and the request is the same", async () => {
    const client = s3Client(options);
    const sent = recording(client);
    client.middlewareStack.use(getFlexibleChecksumsPlugin(client.config, PUT_OBJECT));
    await client.send(put);
    const reference = s3Client(options);
    const expected = recording(reference);
    await reference.send(put);
    expect(sent[0] && checksumHeaders(sent[0])).toEqual([]);
    expect(sent[0]?.body).toEqual(expected[0]?.body);
  });

  it.each([
    ["a client left at the SDK's default", new S3Client({ ...options }), PUT_OBJECT, put],
    [
      "a PutObject that names an algorithm",
      s3Client(options),
      PUT_OBJECT,
      new PutObjectCommand({ Bucket: "b", Key: "k", Body: "x", ChecksumAlgorithm: "SHA256" }),
    ],
    ["an operation that requires a checksum", s3Client(options), DELETE_OBJECTS, put],
    [
      "a GetObject that asks for validation",
      s3Client(options),
      GET_OBJECT,
      new GetObjectCommand({ Bucket: "b", Key: "k", ChecksumMode: "ENABLED" }),
    ],
    [
      "a GetObject on a client that validates by default",
      new S3Client({ ...options }),
      GET_OBJECT,
      new GetObjectCommand({ Bucket: "b", Key: "k" }),
    ],
  ] as const)(
    "the stand-in refuses %s, naming why, and sends nothing",
    async (_, client, operation, command) => {
      const sent = recording(client);
      client.middlewareStack.use(getFlexibleChecksumsPlugin(client.config, operation));
      await expect(client.send(command as PutObjectCommand)).rejects.toThrow(NO_FLEXIBLE_CHECKSUMS);
      expect(sent).toEqual([]);
    },
  );
});
