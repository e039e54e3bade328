// What Lambda calls, as in every function folder (tools/bundler bundles src/index.ts).
export { handler } from "./handler.js";
