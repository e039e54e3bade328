// fauxqs 2.4.1 (its latest release) with persistence records a message made visible again by writing NULL
// into approximate_receive_count, a NOT NULL column. So ChangeMessageVisibility to 0 (§2.6) fails with a
// 500 after the message has left the in-flight list and before it rejoins the ready one: the message is
// gone from the running server (a FIFO group stays locked) until a restart reloads it from SQLite, and the
// SDK's retry is answered ReceiptHandleIsInvalid. The workers' retry backoff asks for 0 s whenever its
// jitter draws under half a second, so chaos runs lost jobs this way and waited for their deadline.
// The row keeps its receive count and first receive time, as fauxqs's own load does for a visibility that
// ended: the count must survive, since maxReceiveCount bounds the retries (§2.3).
const { PersistenceManager } = await import(new URL("./persistence.js", import.meta.resolve("fauxqs")).href);

const statements = new WeakMap();

/** Replaces fauxqs's broken write of a visible-again message; idempotent. */
export function patchFauxqsVisibleAgain() {
  if (typeof PersistenceManager?.prototype?.updateMessageReady !== "function")
    throw new Error(
      "fauxqs changed: PersistenceManager.updateMessageReady is gone. Check whether ChangeMessageVisibility " +
        "to 0 still loses messages with persistence (local/chaos/test/integration/sqs-restart.test.ts) and adapt " +
        "or drop local/chaos/src/fauxqs-visible-again.mjs",
    );
  PersistenceManager.prototype.updateMessageReady = function updateMessageReady(messageId) {
    let statement = statements.get(this);
    if (!statement) {
      statement = this.db.prepare(
        "UPDATE sqs_messages SET receipt_handle = NULL, visibility_deadline = NULL WHERE message_id = ?",
      );
      statements.set(this, statement);
    }
    statement.run(messageId);
  };
}
