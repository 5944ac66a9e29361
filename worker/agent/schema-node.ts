/**
 * What the walks over a tool's JSON Schema share (argument coercion in coerce-arguments.ts,
 * failure explanations in arg-errors.ts): a schema node's shape, whether a value passes a
 * node (TypeBox's check, the same one that validates the whole arguments), references inside
 * the root schema, and `pattern` regular expressions.
 */
import type { TSchema } from "typebox";
import { Check } from "typebox/schema";

/** A schema object, read by its JSON Schema keywords. */
export type SchemaNode = Record<string, unknown>;

/** Whether `s` is a schema object (not a boolean schema, not an array). */
export const isSchema = (s: unknown): s is SchemaNode => typeof s === "object" && s !== null && !Array.isArray(s);

/** Whether `v` is a JSON object: not null, not an array, not bytes. */
export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/**
 * Whether `v` has the JSON Schema type `t` (with TypeBox's `bytes`, `bigint` and `undefined`);
 * a `number` is finite. The explanations name a failed type by it, and coercion leaves a value
 * of a type list alone that already has one of its types.
 */
export function hasType(v: unknown, t: unknown): boolean {
  switch (t) {
    case "string":
      return typeof v === "string";
    case "number":
      return Number.isFinite(v);
    case "integer":
      return Number.isInteger(v);
    case "boolean":
      return typeof v === "boolean";
    case "null":
      return v === null;
    case "array":
      return Array.isArray(v);
    case "object":
      return isPlainObject(v);
    case "bytes":
      return v instanceof Uint8Array;
    case "bigint":
      return typeof v === "bigint";
    case "undefined":
      return v === undefined;
    default:
      return false;
  }
}

/** One tool schema, for checking its parts and resolving its references. */
export class SchemaRoot {
  constructor(readonly root: SchemaNode) {}

  /**
   * Whether `v` passes `node`, a part of the root; undefined when TypeBox cannot check it.
   * The root's definitions come along, so a part's `#/$defs/...` references resolve.
   */
  passes(node: unknown, v: unknown): boolean | undefined {
    if (typeof node === "boolean") return node;
    if (!isSchema(node)) return true;
    const { $defs, definitions } = this.root;
    const scoped =
      node === this.root || ($defs === undefined && definitions === undefined)
        ? node
        : { ...(isSchema($defs) ? { $defs } : {}), ...(isSchema(definitions) ? { definitions } : {}), ...node };
    try {
      return Check(scoped as TSchema, v);
    } catch {
      return undefined;
    }
  }

  /** The target of a `$ref` inside the root (`#`, a JSON Pointer, or a `$defs` name); undefined when it names nothing. */
  resolve(ref: string): unknown {
    if (ref === "#") return this.root;
    if (!ref.startsWith("#/")) return isSchema(this.root.$defs) ? this.root.$defs[ref] : undefined;
    let at: unknown = this.root;
    for (const raw of ref.slice(2).split("/")) {
      if (typeof at !== "object" || at === null) return undefined;
      at = (at as Record<string, unknown>)[decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~")];
    }
    return at;
  }
}

const regexes = new Map<string, RegExp>();

/** A `pattern` as JSON Schema means it (with the `u` flag), or without `u` for older sources that `u` refuses. */
export function patternRegex(source: string): RegExp {
  let re = regexes.get(source);
  if (re === undefined) {
    try {
      re = new RegExp(source, "u");
    } catch {
      re = new RegExp(source);
    }
    regexes.set(source, re);
  }
  return re;
}
