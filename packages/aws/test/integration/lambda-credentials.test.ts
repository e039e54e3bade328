import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CredentialsProviderError } from "@smithy/core/config";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defaultProvider, NO_LAMBDA_CREDENTIALS } from "../../src/lambda-credentials.js";

// The chain a function's bundle uses in place of the SDK's default one (tools/bundler/src/bundle-function.ts).

const CREDENTIAL_VARIABLES = [
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_CREDENTIAL_EXPIRATION",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
];

beforeEach(() => {
  for (const name of CREDENTIAL_VARIABLES) vi.stubEnv(name, undefined);
});
afterEach(() => vi.unstubAllEnvs());

/** A container credentials endpoint on loopback, as Lambda serves one with SnapStart; counts its requests. */
async function credentialsEndpoint(expiresInMs: number): Promise<{
  url: string;
  requests: IncomingMessage["headers"][];
  close: () => Promise<void>;
}> {
  const requests: IncomingMessage["headers"][] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.headers);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        AccessKeyId: `container-key-${requests.length}`,
        SecretAccessKey: "container-secret",
        Token: "container-session",
        Expiration: new Date(Date.now() + expiresInMs).toISOString(),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/2021-04-23/credentials`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("a bundle's credential chain (Lambda's two sources)", () => {
  it("reads the role's credentials from the environment, as Lambda sets them", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "env-key");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "env-secret");
    vi.stubEnv("AWS_SESSION_TOKEN", "env-session");
    const provider = defaultProvider();
    expect(await provider()).toMatchObject({
      accessKeyId: "env-key",
      secretAccessKey: "env-secret",
      sessionToken: "env-session",
    });
    // Memoized: credentials without an expiry are read once per client.
    vi.stubEnv("AWS_ACCESS_KEY_ID", "other-key");
    expect((await provider()).accessKeyId).toBe("env-key");
  });

  it("without them, fetches container credentials with the authorization token, and keeps them until near expiry", async () => {
    const endpoint = await credentialsEndpoint(3_600_000);
    try {
      vi.stubEnv("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.url);
      vi.stubEnv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "lambda-token");
      const provider = defaultProvider();
      const credentials = await provider();
      expect(credentials).toMatchObject({
        accessKeyId: "container-key-1",
        secretAccessKey: "container-secret",
        sessionToken: "container-session",
      });
      expect(credentials.expiration).toBeInstanceOf(Date);
      expect((await provider()).accessKeyId).toBe("container-key-1");
      expect(endpoint.requests.map((h) => h.authorization)).toEqual(["lambda-token"]);
    } finally {
      await endpoint.close();
    }
  });

  it("does not keep credentials that expire within five minutes", async () => {
    const endpoint = await credentialsEndpoint(60_000);
    try {
      vi.stubEnv("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.url);
      const provider = defaultProvider();
      const first = await provider();
      const second = await provider();
      expect(second.accessKeyId).not.toBe(first.accessKeyId);
      expect(endpoint.requests.length).toBeGreaterThan(1);
    } finally {
      await endpoint.close();
    }
  });

  it("with neither, fails with an error naming what a function's bundle reads", async () => {
    const failure = await defaultProvider()().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CredentialsProviderError);
    expect((failure as CredentialsProviderError).message).toBe(NO_LAMBDA_CREDENTIALS);
    expect((failure as CredentialsProviderError).tryNextLink).toBe(false);
  });
});
