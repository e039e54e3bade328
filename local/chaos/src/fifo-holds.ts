/**
 * How long each FIFO job's message was held hidden, as the SQS front saw it (sqs-restart.ts: every
 * request of the mappings and the functions passes it, and the product has no handle to it). A FIFO
 * group is held by its oldest message while that message is in flight: from a receive until the message
 * is deleted or its visibility ends (§2.3, §3). The visibility a receive gives is the queue's (as a
 * SetQueueAttributes last set it) or the receive's own VisibilityTimeout, and a ChangeMessageVisibility on
 * that receipt handle moves its end to the call's time plus the timeout asked (§2.6). A message sent while
 * the queue had a delay (DelaySeconds, as a SetQueueAttributes set it) was hidden from its send until the
 * delay ended, its group held before any receive. Time the message spends visible, waiting for a poller
 * behind other groups' messages, is a backlog, not a hold: the product cannot be blamed for it, and a
 * measure from first delivery to effect counted it (a 100,000-event run under load measured 143 s for a
 * group whose message was hidden well inside the queue's bound).
 *
 * Only the AWS JSON protocol is read (the SDK's for SQS since 3.4xx); a delivered job the front never saw
 * received is reported by the verdict, so a front that stops seeing cannot pass by seeing nothing.
 */

/** One exchange with the SQS emulator, as the front passed it on. */
export interface SqsExchange {
  /** The request's `x-amz-target` (`AmazonSQS.ReceiveMessage`, …). */
  readonly target: string;
  readonly request: Uint8Array;
  readonly status: number;
  readonly answer: Uint8Array;
  /** When the answer came back (ms since the epoch). */
  readonly at: number;
}

interface Receive {
  readonly at: number;
  hideUntil: number;
  deletedAt?: number;
}

interface Batch<T> {
  readonly Entries?: readonly (T & { readonly Id?: string })[];
}

/** The longest a job's message was held, with how many receives the front saw of it. */
export interface Hold {
  readonly ms: number;
  readonly receives: number;
}

const TARGET = "AmazonSQS.";

function json(text: Uint8Array | string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(typeof text === "string" ? text : Buffer.from(text).toString("utf8"));
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The queue a QueueUrl names, as fauxqs 2.4.1 resolves it (SqsStore.parseQueueUrl): the last non-empty
 * segment of its path, so ".../name/" and ".../name//" name the queue too. Read any other way, a visibility
 * call the queue applied could pass unseen.
 */
function queueName(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  const segments = url
    .replace(/^https?:\/\/[^/]+/, "")
    .split("/")
    .filter(Boolean);
  return segments[segments.length - 1];
}

/**
 * When a hide asked for `timeout` seconds at `at` ends, as the queue reads the number: fauxqs 2.4.1 (the
 * queue of the chaos run) checks the range with `<` and `>` and sets the deadline at now + timeout * 1000,
 * so "60" hides for 60 s and a value that is no number gives a deadline (NaN) that never passes: the
 * message stays in flight, its group locked, until it is deleted. `Number` converts as `*` does.
 */
function hideEnd(at: number, timeout: unknown): number {
  const ms = Number(timeout) * 1000;
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : at + ms;
}

/** A queue attribute in seconds as fauxqs reads it: `parseInt(attributes[name])`, NaN if it cannot. */
function attributeSeconds(
  attributes: unknown,
  name: "VisibilityTimeout" | "DelaySeconds",
): number | undefined {
  const value =
    attributes !== null && typeof attributes === "object"
      ? (attributes as Record<string, unknown>)[name]
      : undefined;
  // biome-ignore lint/correctness/useParseIntRadix: read as fauxqs reads it, without a radix.
  return value === undefined ? undefined : Number.parseInt(String(value));
}

/**
 * The queue's visibility after a SetQueueAttributes (any client of the emulator may send one): fauxqs reads
 * it at each receive, so one it cannot read hides for ever.
 */
function queueVisibilityMs(attributes: unknown, before: number): number {
  const seconds = attributeSeconds(attributes, "VisibilityTimeout");
  if (seconds === undefined) return before;
  return Number.isNaN(seconds) ? Number.POSITIVE_INFINITY : seconds * 1000;
}

/**
 * The queue's delay after a SetQueueAttributes: fauxqs reads it at each send and delays the message only when
 * it is above 0 (a FIFO queue too: the queue's delay applies to it, a message's own DelaySeconds is refused).
 */
function queueDelayMs(attributes: unknown, before: number): number {
  const seconds = attributeSeconds(attributes, "DelaySeconds");
  if (seconds === undefined) return before;
  return seconds > 0 ? seconds * 1000 : 0;
}

function callIdOf(body: unknown): string | undefined {
  if (typeof body !== "string") return undefined;
  const parsed = json(body);
  return typeof parsed?.callId === "string" ? parsed.callId : undefined;
}

/** The MessageIds a send batch's answer gives the request's entries it lists as successful. */
function sentIds(request: Batch<object>, answer: Record<string, unknown> | undefined): string[] {
  const ids = new Set((request.Entries ?? []).map((e) => e.Id));
  return (
    Array.isArray(answer?.Successful) ? (answer.Successful as { Id?: unknown; MessageId?: unknown }[]) : []
  )
    .filter((s) => ids.has(s.Id as string | undefined) && typeof s.MessageId === "string")
    .map((s) => s.MessageId as string);
}

/** The request's entries a batch answer lists as successful. */
function succeeded<T>(request: Batch<T>, answer: Record<string, unknown> | undefined): T[] {
  const ok = new Set(
    (Array.isArray(answer?.Successful) ? (answer.Successful as { Id?: unknown }[]) : []).map((s) => s.Id),
  );
  return (request.Entries ?? []).filter((e) => ok.has(e.Id));
}

export class FifoHolds {
  #queue: { readonly name: string; visibilityMs: number; delayMs: number } | undefined;
  /** Every receive of the watched queue's messages, by MessageId, whatever the body (a poison one too). */
  readonly #byMessage = new Map<string, Receive[]>();
  /** The messages of each call its body names (a job may have several: a second send, a redrive). */
  readonly #messagesOfCall = new Map<string, Set<string>>();
  readonly #byHandle = new Map<string, Receive>();
  /** Every message a send of the watched queue made, by MessageId (a deduplicated send makes none). */
  readonly #sent = new Set<string>();
  /** The messages sent while the queue had a delay: hidden from their send until the delay ended. */
  readonly #delayed = new Map<string, { readonly at: number; readonly until: number }>();

  /**
   * From now on, receives of this queue (its default visibility in ms) are measured, and sends while it
   * has a delay (none unless a SetQueueAttributes gives it one: the local pipeline creates it without).
   */
  watch(queueUrl: string, visibilityMs: number): void {
    this.#queue = { name: queueName(queueUrl) ?? queueUrl, visibilityMs, delayMs: 0 };
  }

  seen(exchange: SqsExchange): void {
    if (!this.#queue || exchange.status !== 200) return;
    // The action as fauxqs dispatches it (`target.replace("AmazonSQS.", "")`): the prefix is not required.
    const action = exchange.target.replace(TARGET, "");
    if (
      action !== "SetQueueAttributes" &&
      action !== "SendMessage" &&
      action !== "SendMessageBatch" &&
      action !== "ReceiveMessage" &&
      action !== "ChangeMessageVisibility" &&
      action !== "ChangeMessageVisibilityBatch" &&
      action !== "DeleteMessage" &&
      action !== "DeleteMessageBatch"
    )
      return;
    const request = json(exchange.request);
    if (!request || queueName(request.QueueUrl) !== this.#queue.name) return;
    const { at } = exchange;
    switch (action) {
      case "SetQueueAttributes":
        this.#queue.visibilityMs = queueVisibilityMs(request.Attributes, this.#queue.visibilityMs);
        this.#queue.delayMs = queueDelayMs(request.Attributes, this.#queue.delayMs);
        return;
      case "SendMessage": {
        const messageId = json(exchange.answer)?.MessageId;
        if (typeof messageId === "string") this.#sentAt(messageId, at, this.#queue.delayMs);
        return;
      }
      case "SendMessageBatch":
        for (const messageId of sentIds(request as Batch<object>, json(exchange.answer)))
          this.#sentAt(messageId, at, this.#queue.delayMs);
        return;
      case "ReceiveMessage":
        this.#received(request, json(exchange.answer), at, this.#queue.visibilityMs);
        return;
      case "ChangeMessageVisibility":
        this.#changed(request.ReceiptHandle, request.VisibilityTimeout, at);
        return;
      case "ChangeMessageVisibilityBatch":
        for (const e of succeeded(
          request as Batch<{ ReceiptHandle?: unknown; VisibilityTimeout?: unknown }>,
          json(exchange.answer),
        ))
          this.#changed(e.ReceiptHandle, e.VisibilityTimeout, at);
        return;
      case "DeleteMessage":
        this.#deleted(request.ReceiptHandle, at);
        return;
      case "DeleteMessageBatch":
        for (const e of succeeded(request as Batch<{ ReceiptHandle?: unknown }>, json(exchange.answer)))
          this.#deleted(e.ReceiptHandle, at);
    }
  }

  #received(
    request: Record<string, unknown>,
    answer: Record<string, unknown> | undefined,
    at: number,
    visibilityMs: number,
  ) {
    // fauxqs takes the receive's own timeout unless it is undefined or null (`??`), then the queue's.
    const hideUntil =
      request.VisibilityTimeout === undefined || request.VisibilityTimeout === null
        ? at + visibilityMs
        : hideEnd(at, request.VisibilityTimeout);
    const messages = Array.isArray(answer?.Messages) ? (answer.Messages as Record<string, unknown>[]) : [];
    for (const m of messages) {
      if (typeof m.MessageId !== "string" || typeof m.ReceiptHandle !== "string") continue;
      const receive: Receive = { at, hideUntil };
      this.#byHandle.set(m.ReceiptHandle, receive);
      const receives = this.#byMessage.get(m.MessageId);
      if (receives) receives.push(receive);
      else this.#byMessage.set(m.MessageId, [receive]);
      // A message that names no call holds its group all the same: it is measured by its MessageId.
      const callId = callIdOf(m.Body);
      if (callId === undefined) continue;
      const ofCall = this.#messagesOfCall.get(callId);
      if (ofCall) ofCall.add(m.MessageId);
      else this.#messagesOfCall.set(callId, new Set([m.MessageId]));
    }
  }

  #sentAt(messageId: string, at: number, delayMs: number) {
    // A FIFO send deduplicated within its interval is answered with the earlier message's Id (§3): it made
    // no message, and no delay.
    if (this.#sent.has(messageId)) return;
    this.#sent.add(messageId);
    if (delayMs > 0) this.#delayed.set(messageId, { at, until: at + delayMs });
  }

  #changed(handle: unknown, timeout: unknown, at: number) {
    const receive = typeof handle === "string" ? this.#byHandle.get(handle) : undefined;
    // SQS takes a change only for a message in flight; the answer said it was taken. A missing timeout is
    // refused in a single change, and in a batch entry fauxqs takes it as NaN: held until deleted.
    if (receive) receive.hideUntil = hideEnd(at, timeout);
  }

  #deleted(handle: unknown, at: number) {
    const receive = typeof handle === "string" ? this.#byHandle.get(handle) : undefined;
    if (receive && receive.deletedAt === undefined) receive.deletedAt = at;
  }

  /**
   * The longest any message of the call was held: the sum, over its receives, of the time from each
   * receive to the first of its deletion, the end of its visibility, the next receive and `until` (the end
   * of the run). undefined when the front saw no receive of it.
   */
  held(callId: string, until = Number.POSITIVE_INFINITY): Hold | undefined {
    const messages = this.#messagesOfCall.get(callId);
    return messages === undefined ? undefined : this.heldMessages([...messages], until);
  }

  /** The messages the front saw received whose body names the call. */
  messagesOf(callId: string): readonly string[] {
    return [...(this.#messagesOfCall.get(callId) ?? [])];
  }

  /**
   * The longest-held message the front saw received other than `measured`, as `held` measures it: a
   * message no job of the run sent (a product may send its own into a group) holds its group in flight
   * all the same (§3).
   */
  longestOther(
    measured: ReadonlySet<string>,
    until = Number.POSITIVE_INFINITY,
  ): { readonly messageId: string; readonly ms: number } | undefined {
    let longest: { messageId: string; ms: number } | undefined;
    for (const messageId of this.#byMessage.keys()) {
      if (measured.has(messageId)) continue;
      const hold = this.heldMessages([messageId], until);
      if (hold !== undefined && (longest === undefined || hold.ms > longest.ms))
        longest = { messageId, ms: hold.ms };
    }
    return longest;
  }

  /**
   * The longest any of these messages was held, as `held` measures it: for a message that names no call
   * (a poison job's), known by the MessageId its send was answered with. undefined when the front saw no
   * receive of any of them.
   */
  heldMessages(messageIds: readonly string[], until = Number.POSITIVE_INFINITY): Hold | undefined {
    let longest: Hold | undefined;
    for (const id of messageIds) {
      const receives = this.#byMessage.get(id);
      if (receives === undefined) continue;
      // A delay holds the message from its send until the delay ends (or, should the clocks disagree, its
      // first receive): nothing can have it meanwhile, and its group waits (fauxqs 2.4.1 delays FIFO sends).
      const delayed = this.#delayed.get(id);
      let ms =
        delayed === undefined
          ? 0
          : Math.max(0, Math.min(delayed.until, receives[0]?.at ?? until, until) - delayed.at);
      receives.forEach((r, n) => {
        const end = Math.min(r.hideUntil, r.deletedAt ?? until, receives[n + 1]?.at ?? until, until);
        ms += Math.max(0, end - r.at);
      });
      if (longest === undefined || ms >= longest.ms) longest = { ms, receives: receives.length };
    }
    return longest;
  }
}
