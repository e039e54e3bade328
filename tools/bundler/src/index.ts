export type { Plugin as BundlerPlugin } from "esbuild";
export {
  bundleFunction,
  directModules,
  duplicatedPackages,
  LAMBDA_CREDENTIALS,
  WITHOUT_EVENT_STREAMS,
  WITHOUT_FLEXIBLE_CHECKSUMS,
  WITHOUT_JS_HASHES,
  withLiteralKeys,
} from "./bundle-function.js";
export { base64Sha256, deterministicZip, type ZipEntry } from "./deterministic-zip.js";
export {
  type Artifact,
  artifactOf,
  base64Sha256Of,
  FUNCTION_HANDLER,
  FUNCTION_RUNTIME,
  MANIFEST_FORMAT,
  type Manifest,
  ManifestError,
  manifestJson,
  readManifest,
} from "./manifest.js";
export {
  declarationFor,
  type FunctionEnvironmentDeclaration,
  packageInfoFor,
  projectedJson,
  SDK_PACKAGE_JSON,
} from "./projected-json.js";
