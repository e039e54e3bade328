export { handler } from "./handler.js";
