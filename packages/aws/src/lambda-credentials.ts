import { type FromEnvInit, fromEnv } from "@aws-sdk/credential-provider-env";
import type { FromHttpOptions } from "@aws-sdk/credential-provider-http";
import { CredentialsProviderError, chain, memoize } from "@smithy/core/config";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Logger } from "@smithy/types";

// What a function's bundle holds in place of the SDK's default credential chain
// (@aws-sdk/credential-provider-node's `defaultProvider`, which every client's runtime configuration
// imports): tools/bundler (bundle-function.ts) resolves that package to this module. Lambda hands a
// function its role's credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), or, where it serves them over HTTP instead (SnapStart), at
// AWS_CONTAINER_CREDENTIALS_FULL_URI; the default chain's other links (shared config and credentials files,
// SSO, `aws login`, credential_process, web identity tokens, the EC2 instance metadata service) never answer
// in Lambda. Their modules and the SDK clients they need (STS, SSO, SSO-OIDC, sign-in) were a fifth of each
// zip, and every cold start unzips the package (docs/benchmarks/cold-start.md). Tests and tools run the SDK's
// own chain: only bundles use this.

/** What the clients pass to their credential provider (the SDK's `init`): we read only the logger. */
export type LambdaCredentialsInit = FromEnvInit & FromHttpOptions & { readonly logger?: Logger };

/** Why no credentials were found: the links this chain has, so that an operator knows what to set. */
export const NO_LAMBDA_CREDENTIALS =
  "no AWS credentials: a function's bundle reads them from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
  "(with AWS_SESSION_TOKEN), as Lambda sets them, or from AWS_CONTAINER_CREDENTIALS_FULL_URI or " +
  "_RELATIVE_URI; profiles, SSO, credential_process and web identity are not bundled " +
  "(packages/aws/src/lambda-credentials.ts)";

/** Refreshed five minutes before they expire, as the SDK's default chain does; environment ones never expire. */
const REFRESH_BEFORE_MS = 300_000;

/**
 * The SDK's `defaultProvider` for a Lambda bundle: environment credentials, else container credentials
 * over HTTP, memoized and refreshed before they expire. Same name and shape as the package it replaces.
 */
export function defaultProvider(init: LambdaCredentialsInit = {}): AwsCredentialIdentityProvider {
  return memoize(
    chain(
      fromEnv(init),
      // Loaded only where Lambda serves the credentials over HTTP (SnapStart), not at every cold start.
      async () => (await import("@aws-sdk/credential-provider-http")).fromHttp(init)(),
      async () => {
        throw new CredentialsProviderError(NO_LAMBDA_CREDENTIALS, {
          tryNextLink: false,
          ...(init.logger ? { logger: init.logger } : {}),
        });
      },
    ),
    (credentials: AwsCredentialIdentity) =>
      credentials.expiration !== undefined &&
      credentials.expiration.getTime() - Date.now() < REFRESH_BEFORE_MS,
    (credentials: AwsCredentialIdentity) => credentials.expiration !== undefined,
  );
}
