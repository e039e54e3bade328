// dynalite, with the Time to Live operations it lacks. Plain JavaScript: the emulator host runs it in a
// worker thread, where no TypeScript loader is registered.
import dynalite from "dynalite";

const TARGET_PREFIX = "DynamoDB_20120810.";

/**
 * A dynalite server (in memory) that also answers UpdateTimeToLive and DescribeTimeToLive as DynamoDB
 * does: dynalite 4 has no UpdateTimeToLive and always describes TTL as DISABLED, so a local stack could
 * not declare the TTL that Terraform declares. The setting is recorded per table (tied to the table's
 * CreationDateTime, so a table deleted and created again starts disabled); items are not expired, which
 * AWS also allows (deletion is best effort, "typically within a few days").
 *
 * @param {{ createTableMs?: number, deleteTableMs?: number, updateTableMs?: number }} delays
 * @returns {import("node:http").Server}
 */
export function createDynamoDbServer(delays = {}) {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...delays });
  const [dynaliteHandler] = server.listeners("request");
  server.removeAllListeners("request");
  /** @type {Map<string, { created: number, attributeName: string, enabled: boolean }>} */
  const ttl = new Map();

  const describeTable = async (request, tableName) => {
    const headers = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "content-length") headers[name] = value;
    }
    headers["x-amz-target"] = `${TARGET_PREFIX}DescribeTable`;
    const { port } = server.address();
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: "POST",
      headers,
      body: JSON.stringify({ TableName: tableName }),
    });
    return { status: response.status, body: await response.text() };
  };

  const answer = (response, status, body) => {
    response.writeHead(status, { "content-type": "application/x-amz-json-1.0" });
    response.end(JSON.stringify(body));
  };
  const validation = (response, message) =>
    answer(response, 400, { __type: "com.amazon.coral.validate#ValidationException", message });

  const timeToLive = async (request, response, operation, text) => {
    let input;
    try {
      input = JSON.parse(text);
    } catch {
      return answer(response, 400, { __type: "com.amazon.coral.service#SerializationException" });
    }
    if (typeof input?.TableName !== "string") return validation(response, "TableName is required");
    const table = await describeTable(request, input.TableName);
    if (table.status !== 200) {
      response.writeHead(table.status, { "content-type": "application/x-amz-json-1.0" });
      return response.end(table.body);
    }
    const created = JSON.parse(table.body).Table?.CreationDateTime ?? 0;
    const current = ttl.get(input.TableName);
    const state = current && current.created === created ? current : undefined;
    if (operation === "DescribeTimeToLive") {
      return answer(response, 200, {
        TimeToLiveDescription: state?.enabled
          ? { TimeToLiveStatus: "ENABLED", AttributeName: state.attributeName }
          : { TimeToLiveStatus: "DISABLED" },
      });
    }
    const spec = input.TimeToLiveSpecification;
    if (
      typeof spec?.AttributeName !== "string" ||
      spec.AttributeName === "" ||
      typeof spec.Enabled !== "boolean"
    ) {
      return validation(response, "TimeToLiveSpecification needs AttributeName and Enabled");
    }
    if (spec.Enabled && state?.enabled) return validation(response, "TimeToLive is already enabled");
    if (!spec.Enabled && !state?.enabled) return validation(response, "TimeToLive is already disabled");
    ttl.set(input.TableName, { created, attributeName: spec.AttributeName, enabled: spec.Enabled });
    return answer(response, 200, { TimeToLiveSpecification: spec });
  };

  server.on("request", (request, response) => {
    const target = String(request.headers["x-amz-target"] ?? "");
    const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : "";
    if (operation !== "UpdateTimeToLive" && operation !== "DescribeTimeToLive") {
      dynaliteHandler.call(server, request, response);
      return;
    }
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      timeToLive(request, response, operation, Buffer.concat(chunks).toString("utf8")).catch((error) =>
        answer(response, 500, { __type: "InternalFailure", message: String(error) }),
      );
    });
  });
  return server;
}
