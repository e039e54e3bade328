export { main, USAGE } from "./cli.js";
