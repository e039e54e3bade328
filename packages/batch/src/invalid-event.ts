/**
 * The event is not a batch the function can read (a manual invoke with the wrong payload, a test
 * event from the console): nothing can be acknowledged, so the invocation fails with this.
 */
export class InvalidEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidEventError";
  }
}
