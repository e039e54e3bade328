/** A function's `npm run build`: bundles the function in the current directory into its dist/. */
import { join } from "node:path";
import { bundleFunction } from "../src/index.js";

const { name, codeBytes } = await bundleFunction(process.cwd(), join(process.cwd(), "dist"));
console.log(`${name}: ${codeBytes} bytes of code`);
