/**
 * Our own check of a value against one of our schemas, for the checks every worker start
 * makes (its first RPC command, the entries a new session begins with, the settings file):
 * TypeBox's check engine, compiler and string formats are then loaded only when a check
 * fails (for TypeBox's verdict and its words: shared/validate.ts) or a schema uses a keyword
 * this file does not check. In the worker bundle TypeBox is a file of its own, loaded on first
 * use (scripts/build.mjs), so a start does not create its ~1,500 functions.
 *
 * The keywords checked are what our schemas use (`type`, `properties`, `required`,
 * `additionalProperties`, `patternProperties`, `items`, `const` of a primitive, `anyOf`, and
 * the length, size and number bounds, `pattern`), each as TypeBox 1.4's schema engine checks
 * it (node_modules/typebox/build/schema/engine/): an optional property may hold `undefined`, a
 * `number` is finite, lengths count code points, a property is there when `key in value`
 * (an own one for `__proto__`, `constructor` and `prototype`). A schema with any other keyword
 * (`$ref`, `format`, `enum`, `oneOf`…, or a key we do not know) gets no check here. The rule
 * that keeps the answers TypeBox's: a value this check passes is one TypeBox passes; one it
 * fails goes to TypeBox, which decides (test/unit/schema-check.test.ts compares both on our
 * schemas and on values made to fail them).
 */

/** A check of one schema: whether the value passes it. */
export type OwnCheck = (value: unknown) => boolean;

/** Keys that annotate a schema and that TypeBox's check ignores (its own `~` ones included). */
const IGNORED = new Set([
  "title",
  "description",
  "default",
  "examples",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly",
  "~kind",
  "~optional",
  "~readonly",
  "~immutable",
  "~unsafe",
]);

const TYPES: Record<string, (v: unknown) => boolean> = {
  object: (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  boolean: (v) => typeof v === "boolean",
  integer: (v) => Number.isInteger(v),
  number: (v) => Number.isFinite(v),
  null: (v) => v === null,
  string: (v) => typeof v === "string",
  bigint: (v) => typeof v === "bigint",
  undefined: (v) => v === undefined,
  void: (v) => v === undefined,
};

/** Thrown inside `compile` when a schema has what this file does not check. */
class Unsupported extends Error {}

/** The check of `schema`, or undefined when it uses a keyword not checked here. */
export function compileOwnCheck(schema: unknown): OwnCheck | undefined {
  try {
    return compile(schema);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const isBound = (v: unknown): v is number => Number.isFinite(v);

/** TypeBox's HasPropertyKey. */
function has(value: object, key: string): boolean {
  return key === "__proto__" || key === "constructor" || key === "prototype" ? Object.hasOwn(value, key) : key in value;
}

/** Code points of `s` (a lone surrogate counts one), as TypeBox counts a string's length. */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function compile(schema: unknown): OwnCheck {
  if (schema === true) return () => true;
  if (schema === false) return () => false;
  if (!isRecord(schema) || Object.getPrototypeOf(schema) !== Object.prototype) throw new Unsupported();
  for (const key of Reflect.ownKeys(schema)) {
    if (typeof key !== "string") throw new Unsupported();
    if (!(key in KEYWORDS) && !IGNORED.has(key)) throw new Unsupported();
  }
  const s = schema;
  const checks: OwnCheck[] = [];
  if ("type" in s) {
    const names = Array.isArray(s.type) ? s.type : [s.type];
    if (names.length === 0 || !names.every((n) => typeof n === "string" && Object.hasOwn(TYPES, n)))
      throw new Unsupported();
    const tests = names.map((n: string) => TYPES[n]!);
    checks.push(tests.length === 1 ? tests[0]! : (v) => tests.some((t) => t(v)));
  }
  // Object keywords: only for an object (not an array).
  const object: Array<(v: Record<string, unknown>) => boolean> = [];
  if ("required" in s) {
    if (!Array.isArray(s.required) || !s.required.every((k) => typeof k === "string")) throw new Unsupported();
    const required = s.required as string[];
    object.push((v) => required.every((k) => has(v, k)));
  }
  if ("additionalProperties" in s) {
    const ap = s.additionalProperties;
    if (!(ap === true || (isRecord(ap) && Reflect.ownKeys(ap).length === 0))) {
      const patterns: string[] = [];
      if ("patternProperties" in s && isRecord(s.patternProperties))
        patterns.push(...Object.getOwnPropertyNames(s.patternProperties));
      if ("properties" in s && isRecord(s.properties))
        patterns.push(
          ...Object.getOwnPropertyNames(s.properties).map((k) => `^${k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
        );
      const known = new RegExp(patterns.length === 0 ? "(?!)" : `(${patterns.join("|")})`, "u");
      const rest = compile(ap);
      object.push((v) => Object.getOwnPropertyNames(v).every((k) => known.test(k) || rest(v[k])));
    }
  }
  if ("patternProperties" in s) {
    if (!isRecord(s.patternProperties)) throw new Unsupported();
    const each = Object.entries(s.patternProperties).map(([p, sub]) => [new RegExp(p, "u"), compile(sub)] as const);
    object.push((v) => each.every(([re, check]) => Object.entries(v).every(([k, x]) => !re.test(k) || check(x))));
  }
  if ("properties" in s) {
    if (!isRecord(s.properties)) throw new Unsupported();
    const required = Array.isArray(s.required) ? (s.required as string[]) : [];
    const each = Object.entries(s.properties).map(([k, sub]) => [k, compile(sub), required.includes(k)] as const);
    object.push((v) =>
      each.every(([k, check, isRequired]) => (!isRequired && v[k] === undefined) || !has(v, k) || check(v[k])),
    );
  }
  if (object.length > 0)
    checks.push(
      (v) => !(typeof v === "object" && v !== null && !Array.isArray(v)) || object.every((c) => c(v as never)),
    );
  // Array keywords.
  const array: Array<(v: unknown[]) => boolean> = [];
  if ("items" in s) {
    if (Array.isArray(s.items)) throw new Unsupported();
    const item = compile(s.items);
    array.push((v) => {
      for (let i = 0; i < v.length; i++) if (!item(v[i])) return false;
      return true;
    });
  }
  if ("minItems" in s) {
    const n = s.minItems;
    if (!isCount(n)) throw new Unsupported();
    array.push((v) => v.length >= n);
  }
  if ("maxItems" in s) {
    const n = s.maxItems;
    if (!isCount(n)) throw new Unsupported();
    array.push((v) => v.length <= n);
  }
  if (array.length > 0) checks.push((v) => !Array.isArray(v) || array.every((c) => c(v)));
  // String keywords.
  const string: Array<(v: string) => boolean> = [];
  if ("minLength" in s) {
    const n = s.minLength;
    if (!isCount(n)) throw new Unsupported();
    string.push((v) => v.length >= n * 2 || (v.length >= n && codePoints(v) >= n));
  }
  if ("maxLength" in s) {
    const n = s.maxLength;
    if (!isCount(n)) throw new Unsupported();
    string.push((v) => v.length <= n || (v.length <= n * 2 && codePoints(v) <= n));
  }
  if ("pattern" in s) {
    if (typeof s.pattern !== "string") throw new Unsupported();
    const re = new RegExp(s.pattern, "u");
    string.push((v) => re.test(v));
  }
  if (string.length > 0) checks.push((v) => typeof v !== "string" || string.every((c) => c(v)));
  // Number keywords (a bigint's too).
  const number: Array<(v: number) => boolean> = [];
  for (const [key, test] of NUMBER_BOUNDS) {
    if (!(key in s)) continue;
    const bound = s[key];
    if (!isBound(bound)) throw new Unsupported();
    number.push((v) => test(v, bound));
  }
  if (number.length > 0)
    checks.push((v) => !(Number.isFinite(v) || typeof v === "bigint") || number.every((c) => c(v as number)));
  if ("const" in s) {
    const c = s.const;
    // A primitive, compared with ===; an object or array TypeBox compares deeply: not here.
    if (!(["bigint", "boolean", "string", "undefined"].includes(typeof c) || c === null || Number.isFinite(c)))
      throw new Unsupported();
    checks.push((v) => v === c);
  }
  if ("anyOf" in s) {
    if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) throw new Unsupported();
    const branches = s.anyOf.map(compile);
    checks.push((v) => branches.some((b) => b(v)));
  }
  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0]!;
  return (v) => checks.every((c) => c(v));
}

const NUMBER_BOUNDS: Array<[string, (v: number, bound: number) => boolean]> = [
  ["exclusiveMinimum", (v, b) => v > b],
  ["exclusiveMaximum", (v, b) => v < b],
  ["minimum", (v, b) => v >= b],
  ["maximum", (v, b) => v <= b],
];

/** The keywords checked here. */
const KEYWORDS: Record<string, true> = {
  type: true,
  required: true,
  additionalProperties: true,
  patternProperties: true,
  properties: true,
  items: true,
  minItems: true,
  maxItems: true,
  minLength: true,
  maxLength: true,
  pattern: true,
  exclusiveMinimum: true,
  exclusiveMaximum: true,
  minimum: true,
  maximum: true,
  const: true,
  anyOf: true,
};
