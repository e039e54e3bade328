export type { Plugin as BundlerPlugin } from "esbuild";
export {
  bundleFunction,
  directModules,
  duplicatedPackages,
  LAMBDA_CREDENTIALS,
  WITHOUT_EVENT_STREAMS,
  withLiteralKeys,
} from "./bundle-function.js";
export { base64Sha256, deterministicZip, type ZipEntry } from "./deterministic-zip.js";
