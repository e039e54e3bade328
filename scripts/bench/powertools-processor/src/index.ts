// What Lambda calls, as in every function folder (packages/bundler bundles src/index.ts).
export { handler } from "./handler.js";
