import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RunningEmulator {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Serves an http.Server on a free loopback port until stopped. */
export async function listenOnLoopback(server: Server): Promise<RunningEmulator> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error?: Error) => (error ? reject(error) : resolve()));
      }),
  };
}
