// fauxqs with two things S3 does that fauxqs 2.4.1 does not, both of which the quarantine relies on
// (docs/emulator-fidelity.md):
// - object tags: fauxqs has no ?tagging subresource, so a PutObjectTagging overwrote the object with the
//   tagging document and a GetObjectTagging returned the object's bytes. Here tags are kept beside the
//   objects, dropped when an object is written again or deleted, and read back as S3 answers them;
//   A GET or HEAD of an object that has tags says how many (`x-amz-tagging-count`), and of one without
//   says nothing, as S3 and moto do (docs/aws-semantics.md §11 "Object tag count"): a scan reads an
//   untagged object in one request;
// - `If-None-Match: *` on PutObject: fauxqs ignored it and overwrote. Here a PUT with it is answered
//   412 PreconditionFailed when the key exists, as S3 does.
// local/emulators/test/integration/fauxqs-s3.test.ts holds both to moto's answers. Plain JavaScript, as
// emulator-host.mjs imports it in the emulator's thread.
import { buildApp } from "fauxqs";

const XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n';
const S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/";

const escapeXml = (text) =>
  text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c],
  );
const unescapeXml = (text) =>
  text.replace(
    /&(lt|gt|amp|quot|apos);/g,
    (_, e) => ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" })[e],
  );

/** `{ bucket, key }` of a path-style object URL (`/bucket/key...`), or null for a bucket or the root. */
function objectOf(url) {
  const path = url.split("?")[0] ?? "";
  const match = /^\/([^/]+)\/(.+)$/.exec(path);
  if (match === null) return null;
  return { bucket: match[1], key: decodeURIComponent(match[2]) };
}

function errorXml(reply, status, code, message, extra = "") {
  return reply
    .code(status)
    .header("content-type", "application/xml")
    .send(`${XML_HEADER}<Error><Code>${code}</Code><Message>${message}</Message>${extra}</Error>`);
}

/** The TagSet of a PutObjectTagging body (S3's `<Tagging><TagSet><Tag>` document). */
function parseTagSet(body) {
  const text = Buffer.isBuffer(body) ? body.toString("utf8") : String(body ?? "");
  return [...text.matchAll(/<Tag>\s*<Key>([\s\S]*?)<\/Key>\s*<Value>([\s\S]*?)<\/Value>\s*<\/Tag>/g)].map(
    ([, key, value]) => ({ Key: unescapeXml(key), Value: unescapeXml(value) }),
  );
}

// S3's tag rules: a key of 1-128 and a value of 0-256 letters, digits, spaces and + - = . _ : / @.
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const validTag = (t) =>
  t.Key.length >= 1 &&
  t.Key.length <= 128 &&
  t.Value.length <= 256 &&
  TAG_TEXT.test(t.Key) &&
  TAG_TEXT.test(t.Value);

/** Starts fauxqs (SQS, SNS, S3; in memory) with S3's tags and conditional writes on 127.0.0.1. */
export async function startFauxqsWithS3Fidelity() {
  const app = buildApp({ logger: false, host: "127.0.0.1" });
  /** "bucket\0key" -> the object's tag set. */
  const tags = new Map();
  const id = (object) => `${object.bucket}\0${object.key}`;
  const exists = async (url) =>
    (await app.inject({ method: "HEAD", url: url.split("?")[0] })).statusCode === 200;

  app.addHook("preHandler", async (request, reply) => {
    const object = objectOf(request.url);
    if (object === null) return;
    const query = request.query ?? {};
    if ("tagging" in query) {
      if (!(await exists(request.url)))
        return errorXml(reply, 404, "NoSuchKey", "The specified key does not exist.");
      if (request.method === "GET") {
        const set = (tags.get(id(object)) ?? [])
          .map((t) => `<Tag><Key>${escapeXml(t.Key)}</Key><Value>${escapeXml(t.Value)}</Value></Tag>`)
          .join("");
        return reply
          .code(200)
          .header("content-type", "application/xml")
          .send(`${XML_HEADER}<Tagging xmlns="${S3_NAMESPACE}"><TagSet>${set}</TagSet></Tagging>`);
      }
      if (request.method === "PUT") {
        const set = parseTagSet(request.body);
        if (!set.every(validTag))
          return errorXml(reply, 400, "InvalidTag", "The TagValue you have provided is invalid");
        tags.set(id(object), set);
      } else if (request.method === "DELETE") tags.delete(id(object));
      else return errorXml(reply, 405, "MethodNotAllowed", "The specified method is not allowed.");
      return reply.code(request.method === "DELETE" ? 204 : 200).send("");
    }
    const whole = !("uploadId" in query) && !("partNumber" in query);
    if (
      request.method === "PUT" &&
      whole &&
      request.headers["if-none-match"] === "*" &&
      (await exists(request.url))
    )
      return errorXml(
        reply,
        412,
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
        "<Condition>If-None-Match</Condition>",
      );
  });

  // The object's tag count on its GET and HEAD, sent only when it has tags (moto 5.2.5's
  // FakeKey.response_dict: `if tags: res["x-amz-tagging-count"] = ...`).
  app.addHook("onSend", async (request, reply, payload) => {
    const object = objectOf(request.url);
    const query = request.query ?? {};
    if (object === null || "tagging" in query || "uploadId" in query) return payload;
    if (request.method !== "GET" && request.method !== "HEAD") return payload;
    if (reply.statusCode !== 200 && reply.statusCode !== 206) return payload;
    const set = tags.get(id(object));
    if (set !== undefined && set.length > 0) reply.header("x-amz-tagging-count", String(set.length));
    return payload;
  });

  // A new object (or none) has only the tags its own PUT gave it (x-amz-tagging), as in S3.
  app.addHook("onResponse", async (request, reply) => {
    const object = objectOf(request.url);
    const query = request.query ?? {};
    if (object === null || "tagging" in query || reply.statusCode >= 300) return;
    if (request.method === "DELETE" && !("uploadId" in query)) tags.delete(id(object));
    if (request.method === "POST" && "uploadId" in query) tags.delete(id(object));
    if (request.method === "PUT" && !("uploadId" in query) && !("partNumber" in query)) {
      const given = request.headers["x-amz-tagging"];
      const set =
        typeof given === "string"
          ? [...new URLSearchParams(given)].map(([Key, Value]) => ({ Key, Value }))
          : [];
      if (set.length > 0) tags.set(id(object), set);
      else tags.delete(id(object));
    }
  });

  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return { address, stop: () => app.close() };
}
