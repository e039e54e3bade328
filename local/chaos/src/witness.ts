/**
 * The witness: the downstream the chaos run's jobs call (the `http.request` tool, over loopback), owned by
 * the harness. The product can reach it only as a downstream, by HTTP, so what it records is what a tool
 * really did, not what the product says it did: every request (a tool run) with its call id, its
 * `Idempotency-Key` header and when it came, and every effect it applied.
 *
 * It honours idempotency keys as a careful downstream does (the convention payment and cloud APIs
 * follow): the first request of a key that succeeds applies the effect and stores its answer; a later
 * request with the same key gets that answer again and applies nothing; a request that comes while one
 * with its key is in flight waits for it. A request without a key, or with a key of its own, applies the
 * effect again: that is how a worker that loses its key shows up as two effects of one job.
 *
 * What a job asks of it is in the request body (the scenario wrote it): how long to take, how big an
 * answer, how many first requests of the call to fail with a 503 (a downstream's passing failure, cured by
 * a retry), or to refuse every request with a 422 (a permanent failure). The effect is applied when the
 * answer is ready, whether or not the client still waits for it: a downstream does not know that a
 * worker's deadline cut the request off, and that is why the next run must carry the same key.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback, type RunningEmulator, readBody } from "@mcp-pipeline/emulators";

/** The path a job's request names: `/effects/<callId>`. */
export const EFFECT_PATH = "/effects/";

/** What a job asks of the downstream (the `http.request` tool's `body`). */
export interface EffectRequest {
  readonly latencyMs?: number;
  readonly resultBytes?: number;
  /** The first `failFirst` requests of the call are answered 503. */
  readonly failFirst?: number;
  /** Every request of the call is answered 422. */
  readonly reject?: boolean;
}

export const RunOutcome = {
  /** The effect was applied by this request. */
  Applied: "applied",
  /** The key's stored answer was sent again; nothing applied. */
  Replayed: "replayed",
  /** Answered 503 as the job asked: nothing applied, a retry may succeed. */
  Failed: "failed",
  /** Answered 422 as the job asked: nothing applied, ever. */
  Rejected: "rejected",
  /** Not a request the witness serves (a wrong path or a body that is not JSON): answered 400. */
  Refused: "refused",
} as const;
export type RunOutcome = (typeof RunOutcome)[keyof typeof RunOutcome];

/** One request to the witness: one run of a tool. */
export interface WitnessRun {
  readonly callId: string;
  /** The `Idempotency-Key` header, or undefined when the request carried none. */
  readonly key: string | undefined;
  /**
   * When the witness read the request's head (before its body): no earlier than the run was sent, and as
   * late after it as the harness's busy event loop made it (an upper bound of the sending).
   */
  readonly receivedAt: number;
  /**
   * How early the request can have reached the witness, measured by the witness's own loop (`ArrivalBound`):
   * a lower bound of its arrival, a few ms before `receivedAt` when the loop was responsive, as far back as
   * the loop was blocked when it was not. Not of its sending: loopback delivery itself can lag (a 10,000-event
   * run had runs sent up to 525 ms before their earliestAt), which is why the judge takes the sender from the
   * sandbox's record of the request and uses these times only for a run no record names (tool-runs.ts).
   */
  readonly earliestAt: number;
  answeredAt: number | undefined;
  outcome: RunOutcome | undefined;
  /** The effect this request applied or was answered with (`<callId>#<n>`). */
  effectId: string | undefined;
  /** The client closed the connection before the answer was sent (a deadline cut it off). */
  clientGone: boolean;
}

/** One effect the witness applied, in the order they were applied across all calls. */
export interface WitnessEffect {
  readonly callId: string;
  readonly effectId: string;
  readonly key: string | undefined;
  readonly at: number;
  readonly ordinal: number;
}

interface StoredAnswer {
  readonly status: number;
  readonly body: string;
  readonly effectId: string;
}

export interface Witness extends RunningEmulator {
  /** The base URL to give the `http.request` tool (HTTP_TOOL_BASE_URL). */
  readonly baseUrl: string;
  runs(callId: string): readonly WitnessRun[];
  effects(callId: string): readonly WitnessEffect[];
  /** Every call the witness saw a request for. */
  calls(): readonly string[];
  readonly totals: { runs: number; effects: number; refused: number };
  /** Requests whose head has arrived, served or not: what a test waits on before it lets a client go. */
  headsReceived(): number;
}

const MAX_LATENCY_MS = 60_000;
const MAX_RESULT_BYTES = 2_000_000;

function parseRequest(body: Buffer): EffectRequest | undefined {
  if (body.length === 0) return {};
  try {
    const value = JSON.parse(body.toString("utf8")) as unknown;
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    const v = value as Record<string, unknown>;
    const int = (x: unknown, max: number) =>
      x === undefined
        ? undefined
        : Number.isInteger(x) && (x as number) >= 0 && (x as number) <= max
          ? x
          : null;
    const latencyMs = int(v.latencyMs, MAX_LATENCY_MS);
    const resultBytes = int(v.resultBytes, MAX_RESULT_BYTES);
    const failFirst = int(v.failFirst, 100);
    if (latencyMs === null || resultBytes === null || failFirst === null) return undefined;
    if (v.reject !== undefined && typeof v.reject !== "boolean") return undefined;
    return {
      ...(latencyMs !== undefined ? { latencyMs: latencyMs as number } : {}),
      ...(resultBytes !== undefined ? { resultBytes: resultBytes as number } : {}),
      ...(failFirst !== undefined ? { failFirst: failFirst as number } : {}),
      ...(v.reject === true ? { reject: true } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Runs `then` after the next poll for I/O: two turns of the event loop (the first immediate runs before the
 * next poll, the second after it).
 */
function afterPendingReads(then: () => void): void {
  setImmediate(() => setImmediate(then));
}

function send(response: ServerResponse, status: number, body: string): void {
  if (response.destroyed) return;
  response.writeHead(status, { "content-type": "application/json" });
  response.end(body);
}

type Answer = (outcome: RunOutcome, status: number, text: string, effectId?: string) => void;

/** How often the witness's loop notes that it ran: the width of the arrival bound of a responsive loop. */
const TICK_MS = 2;

/**
 * How early a request the witness reads now can have arrived: the third last time an unref'd interval
 * timer on the witness's thread ran. Why that is sound (a request read at s reached the witness's socket
 * after that tick, so its sender wrote it no earlier):
 *
 * Each turn of libuv's loop runs the due timers, then polls for I/O (then immediates, closes, and the timers
 * again: the cycle is timers, poll). The tick runs at most once a timers phase (Node reschedules an
 * interval from the phase's time, so it is not due again in the same phase). The 'request' event is emitted
 * as the HTTP parser reads the head, inside the socket's read callback in the poll phase. Bytes that are in
 * the kernel when a poll starts are read by that poll if their connection is already read (a kept-alive
 * connection), or, on a new connection, accepted by that poll and read by the next one (the accepted
 * socket is added to epoll when the next poll begins). So if the bytes were in by a tick t, taken before
 * the poll of its turn, the head is read one turn later at the most, and at most one tick (that later
 * turn's) lies between t and the read. Two ticks between the third last tick and s therefore mean the bytes
 * came after it. A loop that was blocked or starved runs its next tick only once it runs again, so the
 * bound reaches back over the whole blocked time and no further; a responsive loop gives 2 to 3 ticks.
 *
 * It holds only while the witness reads every connection it has: Node's server stops reading one whose
 * pipelined answers back up, and the workers' client (fetch) sends one request at a time on a connection,
 * so it never pipelines. Before three ticks the bound is the moment before the server listened: nothing
 * can have arrived earlier.
 */
class ArrivalBound {
  private readonly ticks: number[];
  private readonly timer: NodeJS.Timeout;

  constructor(listeningFrom: number) {
    this.ticks = [listeningFrom, listeningFrom, listeningFrom];
    this.timer = setInterval(() => {
      this.ticks.shift();
      this.ticks.push(Date.now());
    }, TICK_MS);
    // The witness's clock keeps no process alive.
    this.timer.unref();
  }

  /** No request read now can have arrived before this. */
  earliest(): number {
    return this.ticks[0] as number;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** What the witness keeps across requests: the runs and effects it saw, and the answers of the keys. */
class WitnessBook {
  readonly runs = new Map<string, WitnessRun[]>();
  readonly effects = new Map<string, WitnessEffect[]>();
  /** Requests seen per call, for `failFirst`. */
  private readonly seen = new Map<string, number>();
  private readonly stored = new Map<string, StoredAnswer>();
  private readonly inFlight = new Map<string, Promise<void>>();
  readonly totals = { runs: 0, effects: 0, refused: 0 };
  private ordinal = 0;
  heads = 0;

  constructor(private readonly arrival: ArrivalBound) {}

  /** One request, one run of a tool: stamped at its head, recorded once its body is in, then served. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { run, served } = this.runAtHead(request);
    watchForClientGone(run, response);
    const body = await this.bodyOrCutOff(request, run, served);
    const asked = served ? parseRequest(body) : undefined;
    if (asked === undefined) {
      this.totals.refused += 1;
      send(response, 400, JSON.stringify({ error: "not a request the witness serves" }));
      return;
    }
    this.record(run);
    await this.serve(run, asked, answerOnceReadsAreIn(request, response, run));
  }

  private runAtHead(request: IncomingMessage): { run: WitnessRun; served: boolean } {
    // Stamped at the request's head ('request' event: method, path and headers read), not once the body
    // is in: a run sent inside an invocation must not be stamped after that invocation ended because its
    // body was read later (issue 24). What is known at the head is all a run needs: its call and its key.
    const receivedAt = Date.now();
    const earliestAt = this.arrival.earliest();
    this.heads += 1;
    const path = (request.url ?? "").split("?")[0] ?? "";
    let callId = "";
    try {
      if (path.startsWith(EFFECT_PATH)) callId = decodeURIComponent(path.slice(EFFECT_PATH.length));
    } catch {
      // A malformed escape names no call: refused below.
    }
    const header = request.headers["idempotency-key"];
    const key = typeof header === "string" && header.length > 0 ? header : undefined;
    const run: WitnessRun = {
      callId,
      key,
      receivedAt,
      earliestAt,
      answeredAt: undefined,
      outcome: undefined,
      effectId: undefined,
      clientGone: false,
    };
    const served = request.method === "POST" && path.startsWith(EFFECT_PATH) && callId.length > 0;
    return { run, served };
  }

  private async bodyOrCutOff(request: IncomingMessage, run: WitnessRun, served: boolean): Promise<Buffer> {
    try {
      return await readBody(request);
    } catch (error) {
      // The client left before its body was in: a run of the tool that reached the downstream and was
      // cut off; nothing applied.
      if (served) {
        run.clientGone = true;
        this.record(run);
      }
      throw error;
    }
  }

  private record(run: WitnessRun): void {
    this.runs.set(run.callId, [...(this.runs.get(run.callId) ?? []), run]);
    this.totals.runs += 1;
  }

  private async serve(run: WitnessRun, asked: EffectRequest, answer: Answer): Promise<void> {
    const { key } = run;
    // A request whose key is in flight waits for it: the careful downstream never runs one key twice at once.
    if (key !== undefined) {
      for (let pending = this.inFlight.get(key); pending !== undefined; pending = this.inFlight.get(key))
        await pending;
    }
    const known = key === undefined ? undefined : this.stored.get(key);
    if (known) {
      answer(RunOutcome.Replayed, known.status, known.body, known.effectId);
      return;
    }
    const done = this.holdKey(key);
    try {
      await this.runTool(run, asked, answer);
    } finally {
      if (key !== undefined) this.inFlight.delete(key);
      done();
    }
  }

  /** Marks `key` in flight; what it returns lets the requests waiting on it go. */
  private holdKey(key: string | undefined): () => void {
    let done = () => {};
    if (key !== undefined)
      this.inFlight.set(
        key,
        new Promise<void>((resolve) => {
          done = resolve;
        }),
      );
    return done;
  }

  /** Does what the job asked: waits, refuses, fails, or applies the effect and stores the key's answer. */
  private async runTool(run: WitnessRun, asked: EffectRequest, answer: Answer): Promise<void> {
    const { callId, key } = run;
    const count = (this.seen.get(callId) ?? 0) + 1;
    this.seen.set(callId, count);
    if (asked.latencyMs) await new Promise((resolve) => setTimeout(resolve, asked.latencyMs));
    if (asked.reject) {
      answer(RunOutcome.Rejected, 422, JSON.stringify({ error: "rejected as the job asked" }));
      return;
    }
    if (count <= (asked.failFirst ?? 0)) {
      answer(RunOutcome.Failed, 503, JSON.stringify({ error: `request ${count} fails as the job asked` }));
      return;
    }
    const list = this.effects.get(callId) ?? [];
    const effectId = `${callId}#${list.length + 1}`;
    list.push({ callId, effectId, key, at: Date.now(), ordinal: this.ordinal++ });
    this.effects.set(callId, list);
    this.totals.effects += 1;
    const text = JSON.stringify({ callId, effectId, payload: "x".repeat(asked.resultBytes ?? 0) });
    if (key !== undefined) this.stored.set(key, { status: 200, body: text, effectId });
    answer(RunOutcome.Applied, 200, text, effectId);
  }
}

/**
 * The client is gone if its connection closed before the answer was handed to it (written out in full):
 * listened for from the head, so that a client that leaves while its body is read, or while its key is in
 * flight, is seen too.
 */
function watchForClientGone(run: WitnessRun, response: ServerResponse): void {
  response.on("close", () => {
    if (!response.writableFinished) run.clientGone = true;
  });
}

function answerOnceReadsAreIn(request: IncomingMessage, response: ServerResponse, run: WitnessRun): Answer {
  return (outcome, status, text, effectId) => {
    run.outcome = outcome;
    run.effectId = effectId;
    // The answer goes out once the connection's pending reads are in: a client that closed its connection
    // before the witness read its request (a sandbox stopped at its timeout while the harness's event loop
    // was busy) leaves the request and the close waiting together, and libuv reads the close a poll after
    // the bytes. Answered at once, that close would look like a client that read its answer and left, and
    // the run's cut-off answer would go unseen (issue 24: 15 runs of a 100,000-event run).
    afterPendingReads(() => {
      run.answeredAt = Date.now();
      // Gone already (closed, or its end of the connection shut), though its 'close' may not have been
      // emitted yet: the answer reaches no one.
      if (response.destroyed || request.socket.destroyed || request.socket.readableEnded)
        run.clientGone = true;
      send(response, status, text);
    });
  };
}

/** Starts the witness on a free loopback port. */
export async function startWitness(): Promise<Witness> {
  const arrival = new ArrivalBound(Date.now());
  const book = new WitnessBook(arrival);
  const server = createServer((request, response) => {
    book.handle(request, response).catch((error: unknown) => {
      send(response, 500, JSON.stringify({ error: String(error) }));
    });
  });
  // Tool runs keep connections alive; a long-lived witness must not close them under a worker.
  server.keepAliveTimeout = 65_000;
  const running = await listenOnLoopback(server).catch((error: unknown) => {
    arrival.stop();
    throw error;
  });
  return {
    ...running,
    stop: () => {
      arrival.stop();
      return running.stop();
    },
    baseUrl: `${running.endpoint}/`,
    runs: (callId) => book.runs.get(callId) ?? [],
    effects: (callId) => book.effects.get(callId) ?? [],
    calls: () => [...book.runs.keys()],
    totals: book.totals,
    headsReceived: () => book.heads,
  };
}
