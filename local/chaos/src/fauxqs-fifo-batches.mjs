// SQS hands over several messages of one FIFO group in one receive, in the group's order, and a message
// that comes back (its visibility ended, or was set to 0) keeps its place in its group (docs/aws-semantics.md
// §3). fauxqs 2.4.1 answers one message per group per receive (docs/emulator-fidelity.md), so a worker that
// ran a batch's messages of a group out of order could never be seen doing it here; and it puts a returning
// message at the front of its group, which reverses two that return together (made visible, or their
// visibility ended: a batch whose invocation failed as a whole). This patch, for the chaos
// run's SQS host only, makes a receive take the next messages of the groups it takes, and keeps each group
// in sequence-number order, so the FIFO order check judges the worker, not the emulator.
const { SqsQueue } = await import(new URL("./sqs/sqsStore.js", import.meta.resolve("fauxqs")).href);

const bySequence = (a, b) => {
  const x = BigInt(a.sequenceNumber ?? 0);
  const y = BigInt(b.sequenceNumber ?? 0);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Replaces fauxqs's FIFO receive with one that takes several messages of a group, in order; idempotent. */
export function patchFauxqsFifoBatches() {
  const original = SqsQueue?.prototype?.dequeueFifo;
  const probe = typeof original === "function" ? new SqsQueue("probe.fifo", "url", "arn", {}) : undefined;
  if (
    !(
      probe?.fifoLockedGroups instanceof Map &&
      probe.fifoMessages instanceof Map &&
      probe.inflightMessages instanceof Map
    )
  )
    throw new Error(
      "fauxqs changed: SqsQueue.dequeueFifo or its group locks are gone. Check whether a FIFO receive still " +
        "answers one message per group (local/chaos/test/integration/sqs-restart.test.ts) and adapt or drop " +
        "local/chaos/src/fauxqs-fifo-batches.mjs",
    );
  if (original.patchedForBatches) return;
  const dequeueFifo = function dequeueFifo(maxCount, ...rest) {
    // fauxqs's receive first puts back the messages whose visibility ended, each at its group's front:
    // a batch that failed as a whole comes back reversed. So they are put back here, then every group
    // sorted, and no pass below puts any back after the sort.
    this.processTimers();
    for (const messages of this.fifoMessages.values()) messages.sort(bySequence);
    const count = Math.min(maxCount, 10);
    this.processTimers = () => {};
    let result;
    try {
      result = original.call(this, count, ...rest);
    } finally {
      delete this.processTimers;
    }
    // fauxqs takes one message of a group and locks the group. Each further pass shows fauxqs only the
    // groups this answer took, unlocked, so that it takes their next messages; the locks then count them.
    while (result.length < count) {
      const groups = new Map();
      for (const { ReceiptHandle } of result) {
        const group = this.inflightMessages.get(ReceiptHandle)?.message.messageGroupId;
        if (group !== undefined && (this.fifoMessages.get(group)?.length ?? 0) > 0)
          groups.set(group, this.fifoLockedGroups.get(group) ?? 0);
      }
      if (groups.size === 0) break;
      const all = this.fifoMessages;
      this.fifoMessages = new Map([...groups.keys()].map((group) => [group, all.get(group)]));
      for (const group of groups.keys()) this.fifoLockedGroups.delete(group);
      // Expired visibilities were put back before the first pass: none may land in the narrowed view.
      this.processTimers = () => {};
      let more = [];
      try {
        more = original.call(this, count - result.length, ...rest);
      } finally {
        delete this.processTimers;
        this.fifoMessages = all;
        for (const [group, locks] of groups) {
          if ((all.get(group)?.length ?? 0) === 0) all.delete(group);
          this.fifoLockedGroups.set(group, locks + (this.fifoLockedGroups.get(group) ?? 0));
        }
      }
      if (more.length === 0) break;
      result.push(...more);
    }
    return result;
  };
  dequeueFifo.patchedForBatches = true;
  SqsQueue.prototype.dequeueFifo = dequeueFifo;
}
