/**
 * Why a tool call's arguments failed their schema, in pi 1.6's words. The model reads this
 * text as the tool's result (and it is kept in the session), so a model prompted or tuned on
 * pi gets the same text from us: pi 1.6 explains a failure with pi-schema's explainer and
 * words every problem as `  - edits.0.oldText: expected string, got integer`.
 *
 * The rules, learned from pi-schema 1.6.0 and held to it by test/worker/arg-errors.test.ts
 * and the oracle test test/integration/tool-argument-errors-oracle.test.ts:
 * - The schema is walked from the root, and only where a value fails (TypeBox decides
 *   that, as for the check itself): a subschema the value passes says nothing.
 * - At one place: a wrong `type` is the only error there (`expected string or null, got
 *   array`); otherwise each failing keyword in turn (`enum`, `const`, string bounds,
 *   `pattern`, a known `format`, number bounds, object members, array items, then
 *   `allOf`, `anyOf`/`oneOf`, `not`, `if`, `$ref`; last, when nothing else failed there,
 *   the members `unevaluatedProperties` / `unevaluatedItems` refuse).
 * - An object first lists its missing required properties (in `required`'s order), then
 *   walks its declared properties (in the schema's order), then its own keys (in the
 *   value's order) for `patternProperties`, `additionalProperties` (`unknown field`) and
 *   `propertyNames`.
 * - A failed union blames one branch: a tagged union (every branch an object with a
 *   distinct literal at one key) the branch its tag selects, or `expected one of` at the
 *   tag; otherwise, for an object, the branch that declares most of its keys, then the
 *   branch whose first error is deepest, the earlier branch on a tie.
 * - Lists of allowed values stop after 20 (`, ... and 5 more]`). Errors are never cut or
 *   de-duplicated; a failure nothing explains is `root: invalid`.
 * Paths are JSON Pointers while walking, shown dotted (`/a~1b/0` is `a/b.0`, `` is `root`).
 * Not followed as pi does: `$dynamicRef`, and references by `$id` URI (only `#`, `#/...`
 * pointers and `$defs` names resolve); TypeBox, not pi, decides validity, so a float
 * `multipleOf` TypeBox accepts within rounding (0.30000000000000004 of 0.1) passes here.
 */
import type { TSchema } from "typebox";
import { Format } from "typebox/format";
import { checker } from "../../shared/validate.js";
import { coerceArguments } from "./coerce-arguments.js";
import {
  hasType,
  isPlainObject as isObject,
  isSchema,
  patternRegex as regex,
  SchemaRoot,
  type SchemaNode as Node,
} from "./schema-node.js";

/** One problem of a value: where (a JSON Pointer into it, `""` for the value itself) and what. */
export interface ArgumentError {
  path: string;
  message: string;
}

/** The formats pi checks (JSON Schema 2020-12's, `url` and `json-pointer-uri-fragment`); others are annotations. */
const CHECKED_FORMATS = new Set([
  "date",
  "date-time",
  "duration",
  "email",
  "hostname",
  "idn-email",
  "idn-hostname",
  "ipv4",
  "ipv6",
  "iri",
  "iri-reference",
  "json-pointer",
  "json-pointer-uri-fragment",
  "regex",
  "relative-json-pointer",
  "time",
  "uri",
  "uri-reference",
  "uri-template",
  "url",
  "uuid",
]);

/** How many allowed values an `enum` or tag error names before it says how many more there are. */
const LISTED_VALUES = 20;

/**
 * The problems of `value` under `schema`, in pi 1.6's order and words. `value` is what was
 * checked (the arguments after coercion); call this only for a value that failed the check:
 * it always returns at least one error.
 */
export function explainArguments(schema: TSchema, value: unknown): ArgumentError[] {
  const out: ArgumentError[] = [];
  new Explainer(new SchemaRoot(schema as unknown as Node)).walk(schema, value, "", out);
  return out.length > 0 ? out : [{ path: "", message: "invalid" }];
}

/** Arguments that pass a tool's schema (coerced to it), or the tool result text saying why not. */
export type ArgumentCheck = { ok: true; value: Record<string, unknown> } | { ok: false; text: string };

/**
 * Check a tool call's arguments as pi 1.6 does: coerced towards the schema first (`"5"` for
 * a number is 5), then checked; a failure is explained on the coerced value, and the text
 * shows `prepared` (the arguments after the tool's `prepareArguments`, before coercion).
 */
export function checkToolArguments(toolName: string, schema: TSchema, prepared: unknown): ArgumentCheck {
  const coerced = coerceArguments(schema, prepared);
  const checked = checker(schema)(coerced);
  if (checked.ok) return { ok: true, value: checked.value as Record<string, unknown> };
  return { ok: false, text: validationFailedText(toolName, explainArguments(schema, coerced), prepared) };
}

/** A JSON Pointer as the model sees it: `""` is `root`, `/edits/0/oldText` is `edits.0.oldText`. */
export function shownPath(pointer: string): string {
  if (pointer === "") return "root";
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))
    .join(".");
}

/**
 * The tool result text of a call whose arguments failed validation, as pi 1.6 writes it.
 * `received` is what was validated before coercion (after the tool's `prepareArguments`).
 */
export function validationFailedText(toolName: string, errors: ArgumentError[], received: unknown): string {
  const lines = errors.map((e) => `  - ${shownPath(e.path)}: ${e.message}`).join("\n");
  return `Validation failed for tool "${toolName}":\n${lines}\n\nReceived arguments:\n${JSON.stringify(received, null, 2)}`;
}

/** Which members of a value some keyword evaluated, for `unevaluatedProperties` / `unevaluatedItems`. */
interface Evaluated {
  props: Set<string>;
  allProps: boolean;
  /** Items before this index are evaluated (a tuple's prefix). */
  items: number;
  allItems: boolean;
  indexes: Set<number>;
}

const emptyEvaluated = (): Evaluated => ({
  props: new Set(),
  allProps: false,
  items: 0,
  allItems: false,
  indexes: new Set(),
});

const child = (path: string, key: string | number) =>
  `${path}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

class Explainer {
  constructor(private readonly root: SchemaRoot) {}

  /** Whether `v` passes `node`; a node TypeBox cannot check counts as failed. */
  private ok(node: unknown, v: unknown): boolean {
    return this.root.passes(node, v) === true;
  }

  walk(node: unknown, v: unknown, path: string, out: ArgumentError[]): void {
    if (node === false) {
      out.push({ path, message: "no value is allowed here" });
      return;
    }
    if (!isSchema(node) || this.ok(node, v)) return;
    const start = out.length;
    const push = (message: string, at = path) => out.push({ path: at, message });
    if (node.type !== undefined) {
      const types = Array.isArray(node.type) ? node.type : [node.type];
      if (!types.some((t) => hasType(v, t))) {
        push(`expected ${types.join(" or ")}, got ${typeName(v)}`);
        return;
      }
    }
    if (Array.isArray(node.enum) && !node.enum.some((e) => deepEqual(e, v)))
      push(`expected one of ${listValues(node.enum)}`);
    if (Object.hasOwn(node, "const") && !deepEqual(node.const, v)) push(`expected ${JSON.stringify(node.const)}`);
    if (typeof v === "string") stringErrors(node, v, push);
    if (typeof v === "number" || typeof v === "bigint") numberErrors(node, v, push);
    if (isObject(v)) this.objectErrors(node, v, path, out, push);
    if (Array.isArray(v)) this.arrayErrors(node, v, path, out, push);
    if (Array.isArray(node.allOf)) for (const s of node.allOf) this.walk(s, v, path, out);
    if (Array.isArray(node.anyOf)) this.unionErrors(node.anyOf, v, path, out, false);
    if (Array.isArray(node.oneOf)) this.unionErrors(node.oneOf, v, path, out, true);
    if (node.not !== undefined && this.ok(node.not, v)) push("must not match the schema in not");
    if (node.if !== undefined) {
      const branch = this.ok(node.if, v) ? node.then : node.else;
      if (branch !== undefined) this.walk(branch, v, path, out);
    }
    if (typeof node.$ref === "string") {
      const target = this.resolve(node.$ref);
      if (target === undefined) push(`unresolved reference ${node.$ref}`);
      else this.walk(target, v, path, out);
    }
    if (out.length === start && (node.unevaluatedProperties !== undefined || node.unevaluatedItems !== undefined))
      this.unevaluatedErrors(node, v, path, out);
  }

  /** What `unevaluatedProperties` / `unevaluatedItems` refuse: members no other keyword of `node` evaluated. */
  private unevaluatedErrors(node: Node, v: unknown, path: string, out: ArgumentError[]): void {
    const { unevaluatedProperties, unevaluatedItems, $id: _id, ...rest } = node;
    const seen = this.evaluated(rest, v);
    if (isObject(v) && unevaluatedProperties !== undefined && !seen.allProps) {
      for (const key of Object.keys(v)) {
        if (seen.props.has(key)) continue;
        if (unevaluatedProperties === false) out.push({ path: child(path, key), message: "unknown field" });
        else this.walk(unevaluatedProperties, v[key], child(path, key), out);
      }
    }
    if (Array.isArray(v) && unevaluatedItems !== undefined && !seen.allItems) {
      for (let i = seen.items; i < v.length; i++) {
        if (seen.indexes.has(i)) continue;
        if (unevaluatedItems === false) out.push({ path: `${path}/${i}`, message: "unexpected item" });
        else this.walk(unevaluatedItems, v[i], `${path}/${i}`, out);
      }
    }
  }

  /**
   * The members of `v` that `node` evaluates (JSON Schema 2020-12's annotations): declared and
   * pattern properties, all of them for `additionalProperties`, a tuple's prefix, all items for
   * `items`, the items `contains` matched; through `allOf`, the passing branches of `anyOf` /
   * `oneOf`, `if` with `then` or `else`, `dependentSchemas` and `$ref`.
   */
  private evaluated(node: unknown, v: unknown, into: Evaluated = emptyEvaluated()): Evaluated {
    if (!isSchema(node)) return into;
    if (isObject(v)) {
      const properties = isSchema(node.properties) ? node.properties : {};
      for (const key of Object.keys(v)) if (Object.hasOwn(properties, key)) into.props.add(key);
      const patterns = isSchema(node.patternProperties) ? Object.keys(node.patternProperties) : [];
      for (const key of Object.keys(v)) if (patterns.some((p) => regex(p).test(key))) into.props.add(key);
      if (node.additionalProperties !== undefined || node.unevaluatedProperties !== undefined) into.allProps = true;
      if (isSchema(node.dependentSchemas)) {
        for (const [key, s] of Object.entries(node.dependentSchemas))
          if (Object.hasOwn(v, key) && this.ok(s, v)) this.evaluated(s, v, into);
      }
    }
    if (Array.isArray(v)) {
      const prefix = Array.isArray(node.prefixItems) ? node.prefixItems.length : 0;
      into.items = Math.max(into.items, Math.min(prefix, v.length));
      if (node.items !== undefined || node.unevaluatedItems !== undefined) into.allItems = true;
      if (node.contains !== undefined) v.forEach((item, i) => this.ok(node.contains, item) && into.indexes.add(i));
    }
    const passing = (list: unknown) => (Array.isArray(list) ? list.filter((s) => this.ok(s, v)) : []);
    for (const s of [...passing(node.allOf), ...passing(node.anyOf), ...passing(node.oneOf)])
      this.evaluated(s, v, into);
    if (node.if !== undefined) {
      if (this.ok(node.if, v)) {
        this.evaluated(node.if, v, into);
        if (this.ok(node.then, v)) this.evaluated(node.then, v, into);
      } else if (this.ok(node.else, v)) this.evaluated(node.else, v, into);
    }
    if (typeof node.$ref === "string") {
      const target = this.resolve(node.$ref);
      if (this.ok(target, v)) this.evaluated(target, v, into);
    }
    return into;
  }

  private resolve(ref: string): unknown {
    return this.root.resolve(ref);
  }

  private objectErrors(
    node: Node,
    v: Record<string, unknown>,
    path: string,
    out: ArgumentError[],
    push: (message: string, at?: string) => void,
  ): void {
    const properties = isSchema(node.properties) ? node.properties : {};
    for (const key of Array.isArray(node.required) ? node.required : []) {
      if (typeof key !== "string") continue;
      const takesUndefined = Object.hasOwn(properties, key) && this.ok(properties[key], undefined);
      if (!Object.hasOwn(v, key) || (v[key] === undefined && !takesUndefined)) push("missing", child(path, key));
    }
    for (const key of Object.keys(properties)) {
      if (Object.hasOwn(v, key) && v[key] !== undefined) this.walk(properties[key], v[key], child(path, key), out);
    }
    const patterns = isSchema(node.patternProperties) ? Object.entries(node.patternProperties) : [];
    for (const key of Object.keys(v)) {
      let declared = Object.hasOwn(properties, key);
      for (const [pattern, s] of patterns) {
        if (!regex(pattern).test(key)) continue;
        declared = true;
        this.walk(s, v[key], child(path, key), out);
      }
      if (!declared && node.additionalProperties === false) push("unknown field", child(path, key));
      else if (!declared && node.additionalProperties !== undefined)
        this.walk(node.additionalProperties, v[key], child(path, key), out);
      if (node.propertyNames !== undefined && !this.ok(node.propertyNames, key))
        push("invalid property name", child(path, key));
    }
    const count = Object.keys(v).length;
    if (typeof node.minProperties === "number" && count < node.minProperties)
      push(`expected at least ${node.minProperties} properties`);
    if (typeof node.maxProperties === "number" && count > node.maxProperties)
      push(`expected at most ${node.maxProperties} properties`);
    // `dependencies` (draft 7) may restate a `dependentRequired` key; its entry then counts, in the first one's place.
    const dependencies: Record<string, unknown> = {
      ...(isSchema(node.dependentRequired) ? node.dependentRequired : {}),
      ...(isSchema(node.dependencies) ? node.dependencies : {}),
    };
    for (const [key, needs] of Object.entries(dependencies)) {
      if (!Object.hasOwn(v, key)) continue;
      if (!Array.isArray(needs)) this.walk(needs, v, path, out);
      else
        for (const other of needs)
          if (!Object.hasOwn(v, other)) push(`required when ${key} is present`, child(path, other));
    }
    if (isSchema(node.dependentSchemas)) {
      for (const [key, s] of Object.entries(node.dependentSchemas))
        if (Object.hasOwn(v, key)) this.walk(s, v, path, out);
    }
  }

  private arrayErrors(
    node: Node,
    v: unknown[],
    path: string,
    out: ArgumentError[],
    push: (message: string) => void,
  ): void {
    // Draft 7's tuple form (`items` as a list, then `additionalItems`) and 2020-12's (`prefixItems`, then `items`).
    const tuple = Array.isArray(node.items);
    const prefix = tuple ? (node.items as unknown[]) : Array.isArray(node.prefixItems) ? node.prefixItems : [];
    const rest = tuple ? node.additionalItems : node.items;
    v.forEach((item, i) => {
      const s = i < prefix.length ? prefix[i] : rest;
      if (s !== undefined) this.walk(s, item, `${path}/${i}`, out);
    });
    if (typeof node.minItems === "number" && v.length < node.minItems) push(`expected at least ${node.minItems} items`);
    if (typeof node.maxItems === "number" && v.length > node.maxItems) push(`expected at most ${node.maxItems} items`);
    if (node.uniqueItems === true && v.some((a, i) => v.slice(0, i).some((b) => deepEqual(a, b))))
      push("expected unique items");
    if (node.contains !== undefined) {
      const min = typeof node.minContains === "number" ? node.minContains : 1;
      const max = typeof node.maxContains === "number" ? node.maxContains : Number.POSITIVE_INFINITY;
      const matching = v.filter((item) => this.ok(node.contains, item)).length;
      if (matching < min || matching > max) push(containsMessage(min, max));
    }
  }

  private unionErrors(branches: unknown[], v: unknown, path: string, out: ArgumentError[], exactlyOne: boolean): void {
    const matches = branches.filter((s) => this.ok(s, v)).length;
    if (matches === 1 || (!exactlyOne && matches > 0)) return;
    if (matches > 1) {
      out.push({ path, message: "matches more than one alternative" });
      return;
    }
    const tag = this.tagOf(branches);
    if (tag !== undefined && isObject(v)) {
      const i = tag.values.indexOf(v[tag.key] as never);
      if (i < 0) out.push({ path: child(path, tag.key), message: `expected one of ${listValues(tag.values)}` });
      else this.walk(branches[i], v, path, out);
      return;
    }
    let best: { errors: ArgumentError[]; declared: number } | undefined;
    for (const s of branches) {
      const errors: ArgumentError[] = [];
      this.walk(s, v, path, errors);
      if (errors.length === 0) continue;
      const declared = isObject(v) ? this.declaredKeys(s, v) : 0;
      if (
        best === undefined ||
        declared > best.declared ||
        (declared === best.declared && errors[0].path.length > best.errors[0].path.length)
      )
        best = { errors, declared };
    }
    out.push(...(best?.errors ?? [{ path, message: "matches no alternative" }]));
  }

  /** A branch itself, or the schema its `$ref` names. */
  private target(s: unknown): unknown {
    return isSchema(s) && typeof s.$ref === "string" ? this.resolve(s.$ref) : s;
  }

  private declaredKeys(s: unknown, v: Record<string, unknown>): number {
    const node = this.target(s);
    const properties = isSchema(node) && isSchema(node.properties) ? node.properties : {};
    return Object.keys(v).filter((k) => Object.hasOwn(properties, k)).length;
  }

  /** The key whose literal tells the branches apart, the first of the first branch's properties that does. */
  private tagOf(branches: unknown[]): { key: string; values: unknown[] } | undefined {
    const nodes = branches.map((s) => this.target(s));
    const first = nodes[0];
    if (!isSchema(first) || !isSchema(first.properties)) return undefined;
    for (const key of Object.keys(first.properties)) {
      const values = nodes.map((s) => {
        const tag = isSchema(s) && isSchema(s.properties) ? s.properties[key] : undefined;
        return isSchema(tag) ? tag.const : undefined;
      });
      const primitive = values.every((x) => x !== undefined && (typeof x !== "object" || x === null));
      if (primitive && new Set(values).size === values.length) return { key, values };
    }
    return undefined;
  }
}

function stringErrors(node: Node, v: string, push: (message: string) => void): void {
  const length = [...v].length;
  if (typeof node.minLength === "number" && length < node.minLength)
    push(`expected at least ${node.minLength} characters`);
  if (typeof node.maxLength === "number" && length > node.maxLength)
    push(`expected at most ${node.maxLength} characters`);
  if (typeof node.pattern === "string" && !regex(node.pattern).test(v)) push(`expected to match ${node.pattern}`);
  if (typeof node.format === "string" && CHECKED_FORMATS.has(node.format) && !Format.Test(node.format, v))
    push(`expected format ${node.format}`);
}

function numberErrors(node: Node, v: number | bigint, push: (message: string) => void): void {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = node;
  if (isBound(minimum) && v < minimum) push(`expected >= ${minimum}`);
  if (isBound(maximum) && v > maximum) push(`expected <= ${maximum}`);
  if (isBound(exclusiveMinimum) && v <= exclusiveMinimum) push(`expected > ${exclusiveMinimum}`);
  if (isBound(exclusiveMaximum) && v >= exclusiveMaximum) push(`expected < ${exclusiveMaximum}`);
  if (isBound(multipleOf) && !isMultiple(v, multipleOf)) push(`expected a multiple of ${multipleOf}`);
}

const isBound = (b: unknown): b is number | bigint => typeof b === "number" || typeof b === "bigint";

/** Whether `v` is a multiple of `d`, exactly in decimal: 0.3 is a multiple of 0.1 though 0.3 / 0.1 is not an integer. */
function isMultiple(v: number | bigint, d: number | bigint): boolean {
  if (typeof v === "bigint" || typeof d === "bigint") {
    if (!Number.isInteger(Number(v)) || !Number.isInteger(Number(d))) return false;
    return BigInt(d) !== 0n && BigInt(v) % BigInt(d) === 0n;
  }
  const q = v / d;
  if (Number.isInteger(q)) return true;
  if (!Number.isFinite(q)) return v % d === 0;
  const [vDigits, vScale] = decimalOf(v);
  const [dDigits, dScale] = decimalOf(d);
  // Both as integers over the same power of ten.
  return vScale >= dScale
    ? (vDigits * 10n ** BigInt(vScale - dScale)) % dDigits === 0n
    : vDigits % (dDigits * 10n ** BigInt(dScale - vScale)) === 0n;
}

/** `|x|` as digits times a power of ten, from its shortest decimal form: 1.25e-7 is [125n, -9]. */
function decimalOf(x: number): [bigint, number] {
  const [digits, power = "0"] = Math.abs(x).toString().split("e");
  const point = digits.indexOf(".");
  const decimals = point < 0 ? 0 : digits.length - point - 1;
  return [BigInt(digits.replace(".", "")), Number(power) - decimals];
}

/** The type a value is reported as: `integer` for whole numbers, `number` for the others. */
function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (v instanceof Uint8Array) return "bytes";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : Number.isFinite(v) ? "number" : String(v);
  return typeof v;
}

function listValues(values: unknown[]): string {
  if (values.length <= LISTED_VALUES) return JSON.stringify(values);
  const listed = JSON.stringify(values.slice(0, LISTED_VALUES));
  return `${listed.slice(0, -1)}, ... and ${values.length - LISTED_VALUES} more]`;
}

function containsMessage(min: number, max: number): string {
  if (max === Number.POSITIVE_INFINITY) return `expected at least ${min} matching ${min === 1 ? "item" : "items"}`;
  if (min === 0) return `expected at most ${max} matching ${max === 1 ? "item" : "items"}`;
  return `expected between ${min} and ${max} matching items`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((x, i) => deepEqual(x, other[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}
