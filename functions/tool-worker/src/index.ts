// What Lambda calls: `index.handler` in the bundle (scripts/bundle-function.ts).
export { handler } from "./handler.js";
