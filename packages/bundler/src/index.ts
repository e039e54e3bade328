export {
  bundleFunction,
  duplicatedPackages,
  LAMBDA_CREDENTIALS,
  shakableSchemas,
  withLiteralKeys,
} from "./bundle-function.js";
export { base64Sha256, deterministicZip, type ZipEntry } from "./deterministic-zip.js";
