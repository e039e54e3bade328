import type { InvokeResult } from "./lambda/local-function.js";

/** What an event source mapping needs of a function: its ARN and a synchronous invoke. */
export interface Invokable {
  readonly arn: string;
  invoke(event: unknown): Promise<InvokeResult>;
}
