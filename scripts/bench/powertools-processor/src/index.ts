// What Lambda calls, as in every function folder (scripts/bundle-function.ts bundles src/index.ts).
export { handler } from "./handler.js";
