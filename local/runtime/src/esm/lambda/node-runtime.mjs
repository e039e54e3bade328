// What Lambda's Node.js runtime does around a handler, for the local sandboxes (docs/aws-semantics.md
// §9.4): resolve the function's handler string in its deployment package, write the console as the
// runtime does (AWS_LAMBDA_LOG_FORMAT, filtered by AWS_LAMBDA_LOG_LEVEL), and log a function error as the
// runtime logs it. Plain JavaScript, so that a sandbox loads it without a TypeScript loader. The public
// source is aws/aws-lambda-nodejs-runtime-interface-client (UserFunction.js, LogPatch.js, Errors.js).
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { format } from "node:util";

/**
 * The errors the runtime itself raises: a class each, named `Runtime.<class>` as Lambda names them (the
 * function error's type), the class's own name being what the JSON log format writes as `errorType`.
 */
const RUNTIME_ERRORS = Object.fromEntries(
  ["ImportModuleError", "HandlerNotFound", "MalformedHandlerName", "UserCodeSyntaxError"].map((name) => {
    const named = {
      [name]: class extends Error {
        constructor(message, cause) {
          super(message, cause === undefined ? undefined : { cause });
        }
      },
    }[name];
    named.prototype.name = `Runtime.${name}`;
    return [name, named];
  }),
);

/** A runtime error of the class `kind` (`HandlerNotFound`...). */
export function runtimeError(kind, message, cause) {
  return new RUNTIME_ERRORS[kind](message, cause);
}

/** Where a Node module's `type` is declared: the nearest package.json above `dir`. */
function isEsmPackage(dir) {
  for (let at = dir; ; at = dirname(at)) {
    if (at.endsWith("/node_modules")) return false;
    const manifest = join(at, "package.json");
    if (existsSync(manifest)) {
      try {
        return JSON.parse(readFileSync(manifest, "utf8")).type === "module";
      } catch {
        return false;
      }
    }
    if (dirname(at) === at) return false;
  }
}

/**
 * Loads the module a handler string names (`index.handler`, `dir/file.nested.fn`) from `taskRoot` and
 * returns its function, raising what Lambda raises: Runtime.MalformedHandlerName for a string without a
 * module and a function or with `..`, Runtime.ImportModuleError when no file of the module exists,
 * Runtime.UserCodeSyntaxError for code that does not parse, Runtime.HandlerNotFound when the module does
 * not export a function by that name. As Lambda does, `name.js` is tried before `name.mjs` and `name.cjs`.
 *
 * @param {string} taskRoot @param {string} handler
 * @returns {Promise<Function>}
 */
export async function loadHandler(taskRoot, handler) {
  if (handler.includes(".."))
    throw runtimeError("MalformedHandlerName", `'${handler}' is not a valid handler name.`);
  const moduleAndFunction = basename(handler);
  const moduleRoot = handler.slice(0, handler.length - moduleAndFunction.length);
  const match = /^([^.]*)\.(.*)$/.exec(moduleAndFunction);
  if (!match || match[1] === "" || match[2] === "") throw runtimeError("MalformedHandlerName", "Bad handler");
  const [, moduleName, functionPath] = match;
  const file = resolve(taskRoot, moduleRoot, moduleName);
  const require = createRequire(join(taskRoot, "index.js"));
  const esm = isEsmPackage(dirname(file));
  /** @type {Array<[string, "import" | "require"]>} */
  const candidates = [
    [file, "require"],
    [`${file}.js`, esm ? "import" : "require"],
    [`${file}.mjs`, "import"],
    [`${file}.cjs`, "require"],
  ];
  let loaded;
  try {
    for (const [path, how] of candidates) {
      if (!existsSync(path)) continue;
      loaded = how === "import" ? await import(pathToFileURL(path).href) : require(path);
      break;
    }
  } catch (error) {
    throw asLoadError(error);
  }
  if (loaded === undefined)
    throw runtimeError(
      "ImportModuleError",
      `Error: Cannot find module '${moduleRoot}${moduleName}' in ${taskRoot} (tried ${candidates.map(([p]) => basename(p)).join(", ")})`,
    );
  const fn = functionPath.split(".").reduce((object, key) => object?.[key], loaded);
  if (fn === undefined || fn === null)
    throw runtimeError("HandlerNotFound", `${handler} is undefined or not exported`);
  if (typeof fn !== "function") throw runtimeError("HandlerNotFound", `${handler} is not a function`);
  return fn;
}

/**
 * An error raised while loading code, as the runtime reports it: code that does not parse is
 * Runtime.UserCodeSyntaxError, a module (or one it imports) that is not there Runtime.ImportModuleError;
 * anything else the code threw is reported as thrown.
 */
export function asLoadError(error) {
  if (error instanceof SyntaxError) return runtimeError("UserCodeSyntaxError", String(error), error);
  if (error?.code === "MODULE_NOT_FOUND" || error?.code === "ERR_MODULE_NOT_FOUND")
    return runtimeError("ImportModuleError", `Error: ${error.message}`, error);
  return error;
}

/** The request id the runtime logs with: a global symbol, as the runtime keeps it. */
const REQUEST_ID = Symbol.for("aws.lambda.runtime.requestId");
export const setRequestId = (id) => {
  globalThis[REQUEST_ID] = id;
};

const LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];

/** An error as the JSON log format writes it: its type (the constructor's name), message and stack. */
function errorFields(error) {
  return {
    errorType: error?.constructor?.name ?? "UnknownError",
    errorMessage: error.message,
    stackTrace: typeof error.stack === "string" ? error.stack.split("\n") : error.stack,
  };
}

/** One log line in the JSON format: timestamp, level, requestId and the message (an error's fields). */
function jsonLine(level, params) {
  const line = { timestamp: new Date().toISOString(), level, requestId: globalThis[REQUEST_ID] };
  if (params.length === 1) {
    line.message = params[0];
    try {
      return JSON.stringify(line, (_key, value) =>
        value instanceof Error ? { ...errorFields(value), ...value } : value,
      );
    } catch {
      line.message = format(params[0]);
      return JSON.stringify(line);
    }
  }
  line.message = format(...params);
  const error = params.find((p) => p instanceof Error);
  if (error) Object.assign(line, errorFields(error));
  return JSON.stringify(line);
}

/** One log line in the text format: timestamp, request id, level and the formatted message, tab-separated. */
const textLine = (level, params) =>
  `${new Date().toISOString()}\t${globalThis[REQUEST_ID]}\t${level}\t${format(...params)}`;

/**
 * Replaces the console's methods as the runtime does: every line in the configured format (JSON or TEXT,
 * from AWS_LAMBDA_LOG_FORMAT), one line per call (newlines become carriage returns), and the levels below
 * AWS_LAMBDA_LOG_LEVEL dropped (console.log is INFO, console.fatal always written). Returns the function
 * that logs an error as the runtime does: in the JSON format the error alone, in the text format after its
 * label ("Invoke Error" for a function error, "Uncaught Exception" for one while loading).
 *
 * @param {NodeJS.ProcessEnv} env
 * @returns {(label: string, error: unknown) => void}
 */
export function patchConsole(env) {
  const json = env.AWS_LAMBDA_LOG_FORMAT?.toUpperCase() === "JSON";
  const threshold = Math.max(0, LEVELS.indexOf(env.AWS_LAMBDA_LOG_LEVEL?.toUpperCase() ?? "TRACE"));
  const write = (level, params) => {
    const line = json ? jsonLine(level, params) : textLine(level, params);
    process.stdout.write(`${line.replace(/\n/g, "\r")}\n`);
  };
  const method = (level) =>
    LEVELS.indexOf(level) >= threshold || level === "FATAL" ? (...params) => write(level, params) : () => {};
  console.trace = method("TRACE");
  console.debug = method("DEBUG");
  console.info = method("INFO");
  console.log = console.info;
  console.warn = method("WARN");
  console.error = method("ERROR");
  console.fatal = method("FATAL");
  const asError = (error) => (error instanceof Error ? error : new Error(String(error)));
  return json
    ? (_label, error) => console.error(asError(error))
    : (label, error) => {
        const e = asError(error);
        const fields = { errorType: e.name, errorMessage: e.message, ...e };
        if (typeof e.stack === "string") fields.stack = e.stack.split("\n");
        console.error(label, `\t${JSON.stringify(fields)}`);
      };
}

/**
 * The _X_AMZN_TRACE_ID of one invocation under active tracing: a new trace root (version 1, the time in
 * hex, 96 random bits), a parent segment id (64 bits), sampled.
 *
 * @param {(bytes: number) => string} randomHex
 */
export function traceHeader(randomHex) {
  const epoch = Math.floor(Date.now() / 1000).toString(16);
  return `Root=1-${epoch}-${randomHex(12)};Parent=${randomHex(8)};Sampled=1`;
}
