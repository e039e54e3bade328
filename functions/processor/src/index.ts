// What Lambda calls: `index.handler` in the bundle (packages/bundler).
export { handler } from "./handler.js";
