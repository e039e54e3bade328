/**
 * The drill's downstream: the HTTP endpoint the workers' `http.request` tool calls (HTTP_TOOL_BASE_URL),
 * on 127.0.0.1. While it is down it answers 503, which the tool reports as a transient failure, so the
 * jobs that call it are retried until their queue's maxReceiveCount moves them to the DLQ (§2.3); once
 * it is up again they succeed, and a redrive completes them. It counts the requests it gets by path: how
 * the drill sees that a job was tried.
 */
import { createServer } from "node:http";
import { listenOnLoopback, type RunningEmulator } from "@mcp-pipeline/emulators";

export interface DrillDownstream extends RunningEmulator {
  /** Whether it answers (200) or fails (503). */
  up: boolean;
  /** Requests received for `path`, whatever the answer. */
  requests(path: string): number;
}

export async function startDrillDownstream(): Promise<DrillDownstream> {
  const counts = new Map<string, number>();
  const state = { up: false };
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://downstream").pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    request.resume();
    if (!state.up) {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "the drill's downstream is down" }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ path, ok: true }));
  });
  const running = await listenOnLoopback(server);
  return {
    ...running,
    get up() {
      return state.up;
    },
    set up(value: boolean) {
      state.up = value;
    },
    requests: (path) => counts.get(path) ?? 0,
  };
}
