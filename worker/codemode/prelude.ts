/**
 * The JavaScript evaluated in the QuickJS VM before a codemode script: it builds the
 * script's globals (`tools`, `ALL_TOOLS`, `text`, `image`, `console`, `exit`, `store`,
 * `load` and the host globals such as `searchTools`) on one host function, `bridge`, kept
 * in a closure the script cannot reach. Values cross as JSON text. The limits are pi
 * 1.6.0's (docs/codemode.md).
 */

/** One `store()` value, and all of them, in characters of JSON. */
const MAX_STORE_VALUE_CHARS = 256 * 1024;
const MAX_STORE_TOTAL_CHARS = 1024 * 1024;
/** Output of one script: characters of text and image data, and `text()`/`image()`/`console` calls. */
const MAX_OUTPUT_CHARS = 16 * 1024 * 1024;
const MAX_OUTPUT_ITEMS = 100_000;

/** The file name of the script in its error stacks, as pi 1.6.0 names it. */
export const SCRIPT_FILE = "codemode.js";

/**
 * Evaluates to `(bridge, toolsJson, globalsJson, storeJson) => { settle, run, stalled }`.
 * `bridge(kind, ...)`: "call"/"global" (id, name, argsJson), "output" (kind, data,
 * mimeType), "done" (ok, valueOrErrorJson, writesJson). `settle(id, ok, payload)` answers
 * a call; `stalled()` fails a script that waits while no call is pending (there are no
 * timers, so nothing could wake it).
 */
export const PRELUDE = `(function (bridge, toolsJson, globalsJson, storeJson) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse;
  const pending = new Map();
  let nextId = 1, finished = false;
  const EXIT = Object.freeze({});
  function done(ok, payload, writes) {
    if (finished) return;
    finished = true;
    bridge("done", ok, payload, writes);
  }
  function errorText(error) {
    const head = error.message ? error.name + ": " + error.message : String(error.name);
    const frames = typeof error.stack === "string"
      ? error.stack.split("\\n").filter((l) => l.trim() && l.includes(${JSON.stringify(SCRIPT_FILE)}))
      : [];
    return [head, ...frames].join("\\n");
  }
  function format(value) {
    if (typeof value === "string") return value;
    if (value instanceof Error) return errorText(value);
    if (typeof value === "number") return String(value);
    try {
      const json = stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  }
  function describeError(error) {
    try {
      if (error instanceof Error)
        return stringify({ name: String(error.name), message: String(error.message), stack: errorText(error) });
      return stringify({ message: String(format(error)) });
    } catch {
      return stringify({ message: "The script threw a value that cannot be described" });
    }
  }
  function caller(kind, name, spread) {
    return (...args) => new Promise((resolve, reject) => {
      let json;
      try {
        json = spread ? stringify(args) : args[0] === undefined ? undefined : stringify(args[0]);
      } catch (error) {
        reject(error);
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve, reject });
      bridge(kind, id, name, json);
    });
  }
  const tools = Object.create(null);
  const allTools = [];
  for (const { name, jsName, description } of parse(toolsJson)) {
    const fn = caller("call", name, false);
    if (!(jsName in tools)) {
      tools[jsName] = fn;
      allTools.push(Object.freeze({ name: jsName, description }));
    }
    if (!(name in tools)) tools[name] = fn;
  }
  Object.freeze(tools);
  Object.freeze(allTools);
  const names = allTools.map((t) => t.name);
  const toolsProxy = new Proxy(tools, {
    get(target, property, receiver) {
      if (typeof property !== "string" || property in target || property in Object.prototype || property === "then" || property === "toJSON")
        return Reflect.get(target, property, receiver);
      const want = property.toLowerCase().replace(/[^a-z0-9]/g, "");
      const close = names.filter((n) => { const c = n.toLowerCase().replace(/[^a-z0-9]/g, ""); return want && (c.includes(want) || want.includes(c)); });
      let message = "tools." + property + " does not exist.";
      if (close.length > 0) message += " Did you mean " + close.slice(0, 5).map((n) => "tools." + n).join(", ") + "?";
      else if (names.length <= 20) message += " Available: " + names.join(", ") + ".";
      message += " ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.";
      throw new TypeError(message);
    },
  });
  for (const name of parse(globalsJson)) Object.defineProperty(globalThis, name, { value: caller("global", name, true), enumerable: true });
  const stored = new Map(Object.entries(parse(storeJson)));
  const writes = new Map();
  let storedChars = 0;
  for (const [key, json] of stored) storedChars += key.length + json.length;
  const STORE_HINT = "store() is for small state such as IDs or summaries. Show images with image(), keep large data in variables, or write it to a file with a tool.";
  function store(key, value) {
    if (typeof key !== "string") throw new TypeError("store() key must be a string");
    const previous = stored.has(key) ? key.length + stored.get(key).length : 0;
    if (value === undefined) {
      stored.delete(key);
      storedChars -= previous;
      writes.set(key, undefined);
      return;
    }
    const json = stringify(value);
    if (json === undefined) throw new TypeError("store(" + stringify(key) + ") value is not JSON-serializable");
    if (json.length > ${MAX_STORE_VALUE_CHARS})
      throw new RangeError("store(" + stringify(key) + ") value has " + json.length + " characters of JSON, more than the limit of ${MAX_STORE_VALUE_CHARS}. " + STORE_HINT);
    const next = storedChars - previous + key.length + json.length;
    if (next > ${MAX_STORE_TOTAL_CHARS})
      throw new RangeError("store is full: stored values would exceed ${MAX_STORE_TOTAL_CHARS} characters of JSON. Delete keys with store(key, undefined). " + STORE_HINT);
    stored.set(key, json);
    storedChars = next;
    writes.set(key, json);
  }
  function load(key) {
    if (typeof key !== "string") throw new TypeError("load() key must be a string");
    const json = stored.get(key);
    return json === undefined ? undefined : parse(json);
  }
  const writesJson = () => stringify([...writes].map(([k, json]) => (json === undefined ? [k] : [k, json])));
  let outputChars = 0, outputItems = 0;
  function output(kind, data, mimeType) {
    if (finished) return;
    outputChars += data.length;
    outputItems++;
    if (outputChars > ${MAX_OUTPUT_CHARS} || outputItems > ${MAX_OUTPUT_ITEMS}) {
      const error = new RangeError("script output exceeded the limit of ${MAX_OUTPUT_CHARS} characters or ${MAX_OUTPUT_ITEMS} text(), image(), and console calls. Print a summary instead, or write large data to a file with a tool.");
      done(false, describeError(error));
      throw error;
    }
    bridge("output", kind, data, mimeType);
  }
  function text(value) {
    const rendered = value === undefined || value === null || (typeof value !== "object" && typeof value !== "function")
      ? String(value)
      : (stringify(value) ?? String(value));
    output("text", rendered);
  }
  const SIGNATURES = [["image/png", /^iVBORw0KGg/], ["image/jpeg", /^[/]9j[/](?!9)/], ["image/gif", /^R0lGOD[dl]h/], ["image/webp", /^UklG.{8}RUJQ/]];
  const EXPECTS = 'image expects a non-empty image URL string, an object with image_url, or an image block { type: "image", data, mimeType }';
  function image(value) {
    let url = value;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      if (value.image_url !== undefined) url = value.image_url;
      else if (value.type === "image" && typeof value.data === "string" && value.data !== "")
        url = value.data.toLowerCase().startsWith("data:") ? value.data : "data:;base64," + value.data;
      else throw new TypeError(EXPECTS);
    }
    if (typeof url !== "string" || url === "") throw new TypeError(EXPECTS);
    const colon = url.indexOf(":"), comma = url.indexOf(",");
    const scheme = colon === -1 ? "" : url.slice(0, colon).toLowerCase();
    if (scheme === "http" || scheme === "https") throw new TypeError("remote image URLs are not supported in tool outputs. Pass a base64 data URI instead");
    const header = comma === -1 ? [] : url.slice(colon + 1, comma).split(";");
    if (scheme !== "data" || comma === -1 || header.slice(1).every((p) => p.toLowerCase() !== "base64"))
      throw new TypeError("invalid image output. Pass a base64 data URI instead");
    const data = url.slice(comma + 1).replace(/\\s+/g, "");
    if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data))
      throw new TypeError("invalid image output. The image data is not valid base64 (truncated or corrupted?)");
    const signature = SIGNATURES.find(([, pattern]) => pattern.test(data.slice(0, 16)));
    if (!signature) throw new TypeError("invalid image output. The image data is not a PNG, JPEG, GIF, or WebP image");
    output("image", data, signature[0]);
  }
  function exit() {
    done(true, undefined, writesJson());
    throw EXIT;
  }
  const console = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) console[level] = (...args) => output("console", args.map(format).join(" "));
  Object.freeze(console);
  for (const [name, value] of [["tools", toolsProxy], ["ALL_TOOLS", allTools], ["console", console], ["text", text], ["image", image], ["exit", exit], ["store", store], ["load", load]])
    Object.defineProperty(globalThis, name, { value, enumerable: true });
  return {
    settle(id, ok, payload) {
      const entry = pending.get(id);
      if (!entry) return;
      pending.delete(id);
      if (!ok) return entry.reject(new Error(payload));
      try {
        entry.resolve(payload === undefined ? undefined : parse(payload));
      } catch (error) {
        entry.reject(error);
      }
    },
    run(fn) {
      let promise;
      try {
        promise = fn(toolsProxy, console);
      } catch (error) {
        return done(false, describeError(error));
      }
      promise.then(
        (value) => {
          let json;
          try {
            json = value === undefined ? undefined : stringify(value);
          } catch (error) {
            return done(false, describeError(error));
          }
          done(true, json, writesJson());
        },
        (error) => (error === EXIT ? undefined : done(false, describeError(error))),
      );
    },
    stalled() {
      if (finished || pending.size > 0) return false;
      done(false, stringify({ name: "Error", message: "The script is waiting on a promise that can never settle: no tool call is pending, and timers do not exist here." }));
      return true;
    },
  };
})`;
