export { bundleFunction } from "./bundle-function.js";
export { base64Sha256, deterministicZip, type ZipEntry } from "./deterministic-zip.js";
