// What Lambda calls: `index.handler` in the bundle (tools/bundler).
export { handler } from "./handler.js";
