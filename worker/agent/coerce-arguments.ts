/**
 * A model's tool call arguments made into what the tool's schema most likely meant, before
 * they are checked, as pi 1.6 does (pi-schema's coercion, pi 1.5's breaking change). It reads
 * JSON Schema keywords, not TypeBox's kinds, so a plain JSON Schema of an extension or an MCP
 * server is coerced as one built with TypeBox. Three passes, in pi's order:
 * 1. an optional property given as `null` whose schema refuses null is left out;
 * 2. conversion by the first of `const`, `enum`, `anyOf`/`oneOf`, `allOf`, `type` (TypeBox's
 *    `Value.Convert` rules): `"5"` for a number is 5, `"3.5"` for an integer 3, `"true"` for a
 *    boolean true, `null` for a string `"null"`, a single value for an array a one-item array,
 *    and a union takes the first branch whose conversion it accepts;
 * 3. primitive coercion by `type`, type lists included (`"5"` for `["integer", "null"]` is 5,
 *    `""` for null is null).
 * A value that cannot be coerced stays as it is and the check reports it. The input is never
 * changed: a container is copied only when one of its members changes.
 */
import type { TSchema } from "typebox";
import { hasType, isPlainObject, isSchema, patternRegex, SchemaRoot, type SchemaNode } from "./schema-node.js";

/** The arguments coerced to `schema`: `value` itself when nothing changes. */
export function coerceArguments(schema: TSchema, value: unknown): unknown {
  const root = schema as unknown as SchemaNode;
  const coercer = new Coercer(new SchemaRoot(root));
  return coercer.byType(coercer.convert(root, coercer.withoutOptionalNulls(root, value)), root);
}

/** A property's value with its member copied on write: `set` copies the object the first time a member changes. */
function copyOnWrite(value: Record<string, unknown>) {
  let out: Record<string, unknown> | undefined;
  return {
    current: () => out ?? value,
    set(key: string, next: unknown) {
      if (next === (out ?? value)[key]) return;
      out ??= { ...value };
      out[key] = next;
    },
    remove(key: string) {
      out ??= { ...value };
      delete out[key];
    },
  };
}

/** `items` mapped by `map`; the same array when no item changes. */
function mapItems(items: unknown[], map: (item: unknown, index: number) => unknown): unknown[] {
  let out: unknown[] | undefined;
  items.forEach((item, i) => {
    const next = map(item, i);
    if (next === item) return;
    out ??= items.slice();
    out[i] = next;
  });
  return out ?? items;
}

/** The schema of an array's item at `index` (tuple prefix first, then `items`); undefined when none applies. */
function itemSchemaAt(schema: SchemaNode, index: number): unknown {
  if (Array.isArray(schema.items)) return schema.items[index];
  if (Array.isArray(schema.prefixItems) && index < schema.prefixItems.length) return schema.prefixItems[index];
  return schema.items;
}

/** A schema's `properties`, `patternProperties` (compiled) and schema-valued `additionalProperties`. */
function members(schema: SchemaNode) {
  return {
    properties: isSchema(schema.properties) ? schema.properties : {},
    patterns: isSchema(schema.patternProperties)
      ? Object.entries(schema.patternProperties).map(([p, s]) => [patternRegex(p), s] as const)
      : [],
    additional: isSchema(schema.additionalProperties) ? schema.additionalProperties : undefined,
  };
}

class Coercer {
  /** (node, value) pairs being converted through a `$ref` or an array wrap: a recursive schema stops there. */
  private readonly entered: [unknown, unknown][] = [];

  constructor(private readonly root: SchemaRoot) {}

  private passes(node: unknown, v: unknown): boolean | undefined {
    return this.root.passes(node, v);
  }

  // Pass 1: optional nulls. Only direct members are looked at; a `$ref` property keeps its null.
  withoutOptionalNulls(schema: unknown, value: unknown): unknown {
    if (!isSchema(schema)) return value;
    if (Array.isArray(value)) {
      return mapItems(value, (item, i) => {
        const s = itemSchemaAt(schema, i);
        return s === undefined ? item : this.withoutOptionalNulls(s, item);
      });
    }
    if (!isPlainObject(value)) return value;
    const { properties, patterns, additional } = members(schema);
    if (patterns.length === 0 && additional === undefined && !isSchema(schema.properties)) return value;
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const out = copyOnWrite(value);
    for (const [key, property] of Object.entries(properties)) {
      if (!Object.hasOwn(value, key)) continue;
      const isRef = isSchema(property) && typeof property.$ref === "string";
      if (value[key] === null && !required.has(key) && !isRef && this.passes(property, null) === false) out.remove(key);
      else out.set(key, this.withoutOptionalNulls(property, value[key]));
    }
    if (patterns.length > 0 || additional !== undefined) {
      for (const key of Object.keys(value)) {
        let declared = Object.hasOwn(properties, key);
        for (const [re, s] of patterns) {
          if (!re.test(key)) continue;
          declared = true;
          out.set(key, this.withoutOptionalNulls(s, out.current()[key]));
        }
        if (!declared && additional !== undefined) out.set(key, this.withoutOptionalNulls(additional, value[key]));
      }
    }
    return out.current();
  }

  // Pass 2: conversion.
  convert(node: unknown, value: unknown): unknown {
    if (!isSchema(node)) return value;
    if (typeof node.$ref === "string") {
      const target = this.root.resolve(node.$ref);
      return isSchema(target) ? this.reenter(target, value) : value;
    }
    if (Object.hasOwn(node, "const")) return convertLiteral(node.const, value);
    if (Array.isArray(node.enum)) return this.convertEnum(node, node.enum, value);
    if (Array.isArray(node.anyOf)) return this.convertUnion(node, node.anyOf, value);
    if (Array.isArray(node.oneOf)) return this.convertUnion(node, node.oneOf, value);
    if (Array.isArray(node.allOf)) {
      const next = node.allOf.reduce((v: unknown, member) => this.convert(member, v), value);
      return this.convertMembers(node, next);
    }
    switch (node.type) {
      case "string":
        return orValue(tryString(value), value);
      case "number":
        return orValue(tryNumber(value), value);
      case "integer": {
        const n = tryNumber(value);
        return n === undefined ? value : Math.trunc(n.value);
      }
      case "boolean":
        return orValue(tryBoolean(value), value);
      case "null":
        return orValue(tryNull(value), value);
      case "bigint":
        return orValue(tryBigInt(value), value);
      case "undefined":
        return orValue(tryUndefined(value), value);
      case "array":
        return this.convertArray(node, value);
      case "object":
        return this.convertObject(node, value);
      case undefined:
        if (node.properties !== undefined || node.patternProperties !== undefined)
          return this.convertObject(node, value);
        if (node.items !== undefined || node.prefixItems !== undefined) return this.convertArray(node, value);
        return value;
      default:
        return value;
    }
  }

  /** `node` converted for `value` unless that pair is already being converted (a cycle). */
  private reenter(node: unknown, value: unknown): unknown {
    if (this.entered.some(([n, v]) => n === node && Object.is(v, value))) return value;
    this.entered.push([node, value]);
    try {
      return this.convert(node, value);
    } finally {
      this.entered.pop();
    }
  }

  /** An enum member stays; else the first member the value converts to exactly. */
  private convertEnum(node: SchemaNode, values: unknown[], value: unknown): unknown {
    if (values.some((member) => member === value)) return value;
    for (const member of values) {
      const candidate = convertLiteral(member, value);
      if (candidate !== value && this.passes(node, candidate) === true) return candidate;
    }
    return value;
  }

  /** A value a branch accepts stays; else the first branch's conversion the whole union accepts. */
  private convertUnion(node: SchemaNode, branches: unknown[], value: unknown): unknown {
    if (branches.some((branch) => this.passes(branch, value) === true)) return this.convertMembers(node, value);
    for (const branch of branches) {
      const candidate = this.convertMembers(node, this.convert(branch, value));
      if (this.passes(node, candidate) === true) return candidate;
    }
    return this.convertMembers(node, value);
  }

  /** A union or intersection node's own object members (plain JSON Schema may declare both). */
  private convertMembers(node: SchemaNode, value: unknown): unknown {
    const declares =
      node.properties !== undefined || node.patternProperties !== undefined || node.additionalProperties !== undefined;
    return declares ? this.convertObject(node, value) : value;
  }

  private convertArray(node: SchemaNode, value: unknown): unknown {
    const prefix = Array.isArray(node.items)
      ? node.items
      : Array.isArray(node.prefixItems)
        ? node.prefixItems
        : undefined;
    if (prefix !== undefined) {
      // A tuple converts its items and never wraps a single value.
      if (!Array.isArray(value)) return value;
      const rest = Array.isArray(node.items) ? undefined : node.items;
      return mapItems(value, (item, i) => {
        const s = i < prefix.length ? prefix[i] : rest;
        return s === undefined ? item : this.convert(s, item);
      });
    }
    if (Array.isArray(value))
      return node.items === undefined ? value : mapItems(value, (item) => this.convert(node.items, item));
    return [isSchema(node.items) ? this.reenter(node.items, value) : value];
  }

  private convertObject(node: SchemaNode, value: unknown): unknown {
    if (!isPlainObject(value)) return value;
    const { properties, patterns, additional } = members(node);
    const out = copyOnWrite(value);
    for (const key of Object.keys(value)) {
      if (value[key] === undefined) continue;
      let next: unknown = value[key];
      let declared = Object.hasOwn(properties, key);
      if (declared) next = this.convert(properties[key], next);
      for (const [re, s] of patterns) {
        if (!re.test(key)) continue;
        declared = true;
        next = this.convert(s, next);
      }
      if (!declared && additional !== undefined) next = this.convert(additional, next);
      out.set(key, next);
    }
    return out.current();
  }

  // Pass 3: primitive coercion by type, for what conversion left (type lists, `""` for null).
  byType(value: unknown, schema: unknown): unknown {
    if (!isSchema(schema)) return value;
    let next = value;
    if (Array.isArray(schema.allOf)) for (const member of schema.allOf) next = this.byType(next, member);
    if (Array.isArray(schema.anyOf)) next = this.byTypeUnion(next, schema.anyOf);
    if (Array.isArray(schema.oneOf)) next = this.byTypeUnion(next, schema.oneOf);
    const types =
      typeof schema.type === "string"
        ? [schema.type]
        : Array.isArray(schema.type)
          ? schema.type.filter((t): t is string => typeof t === "string")
          : [];
    const fitsOne = types.length > 1 && types.some((t) => hasType(next, t));
    if (types.length > 0 && !fitsOne) {
      for (const t of types) {
        const candidate = coercePrimitive(next, t);
        if (candidate !== next) {
          next = candidate;
          break;
        }
      }
    }
    if (types.includes("object") && isPlainObject(next)) next = this.byTypeMembers(next, schema);
    if (types.includes("array") && Array.isArray(next)) {
      next = mapItems(next, (item, i) => {
        const s = itemSchemaAt(schema, i);
        return isSchema(s) ? this.byType(item, s) : item;
      });
    }
    return next;
  }

  private byTypeUnion(value: unknown, branches: unknown[]): unknown {
    if (branches.some((branch) => this.passes(branch, value) === true)) return value;
    for (const branch of branches) {
      const coerced = this.byType(value, branch);
      if (this.passes(branch, coerced) === true) return coerced;
    }
    return value;
  }

  private byTypeMembers(value: Record<string, unknown>, schema: SchemaNode): unknown {
    const { properties, patterns, additional } = members(schema);
    const out = copyOnWrite(value);
    for (const [key, property] of Object.entries(properties)) {
      if (key in value) out.set(key, this.byType(value[key], property));
    }
    for (const key of Object.keys(value)) {
      let declared = Object.hasOwn(properties, key);
      for (const [re, s] of patterns) {
        if (!re.test(key)) continue;
        declared = true;
        out.set(key, this.byType(out.current()[key], s));
      }
      if (!declared && additional !== undefined) out.set(key, this.byType(value[key], additional));
    }
    return out.current();
  }
}

type Converted<T> = { value: T } | undefined;

const orValue = <T>(result: Converted<T>, value: unknown): unknown => (result === undefined ? value : result.value);

const isFiniteNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** A literal (`const`, an enum member) from a value of another type that converts to exactly it. */
function convertLiteral(literal: unknown, value: unknown): unknown {
  if (literal === value) return value;
  const convert: Record<string, (v: unknown) => Converted<unknown>> = {
    string: tryString,
    number: tryNumber,
    boolean: tryBoolean,
    bigint: tryBigInt,
  };
  const result = convert[typeof literal]?.(value);
  return result !== undefined && result.value === literal ? result.value : value;
}

function tryString(v: unknown): Converted<string> {
  if (typeof v === "bigint" || typeof v === "boolean" || isFiniteNumber(v)) return { value: String(v) };
  if (v === null) return { value: "null" };
  if (typeof v === "string") return { value: v };
  if (v === undefined) return { value: "" };
  return undefined;
}

/** A whole number written as a bigint literal (`12n`), with a fraction (truncated) or plain. */
function bigIntOfString(s: string): bigint | undefined {
  if (/^-?(0|[1-9]\d*)n$/.test(s)) return BigInt(s.slice(0, -1));
  if (/^-?(0|[1-9]\d*)\.\d+$/.test(s)) return BigInt(s.split(".")[0]);
  if (/^-?(0|[1-9]\d*)$/.test(s)) return BigInt(s);
  return undefined;
}

function tryNumber(v: unknown): Converted<number> {
  if (typeof v === "bigint") return v <= MAX_SAFE && v >= MIN_SAFE ? { value: Number(v) } : undefined;
  if (typeof v === "boolean") return { value: v ? 1 : 0 };
  if (isFiniteNumber(v)) return { value: v };
  if (v === null || v === undefined) return { value: 0 };
  if (typeof v !== "string") return undefined;
  const n = +v;
  if (Number.isFinite(n)) return { value: n };
  const lower = v.toLowerCase();
  if (lower === "false") return { value: 0 };
  if (lower === "true") return { value: 1 };
  const big = bigIntOfString(v);
  return big !== undefined && big <= MAX_SAFE && big >= MIN_SAFE ? { value: Number(big) } : undefined;
}

function tryBigInt(v: unknown): Converted<bigint> {
  if (typeof v === "bigint") return { value: v };
  if (typeof v === "boolean") return { value: v ? 1n : 0n };
  if (isFiniteNumber(v)) return { value: BigInt(Math.trunc(v)) };
  if (v === null || v === undefined) return { value: 0n };
  if (typeof v !== "string") return undefined;
  const big = bigIntOfString(v);
  if (big !== undefined) return { value: big };
  const lower = v.toLowerCase();
  return lower === "false" ? { value: 0n } : lower === "true" ? { value: 1n } : undefined;
}

/** Whether a string says "nothing": `undefined`, `null` (any case), empty or `0`. */
const saysNothing = (s: string) => ["undefined", "null"].includes(s.toLowerCase()) || s === "" || s === "0";

function tryUndefined(v: unknown): Converted<undefined> {
  if (v === undefined || v === null || v === 0n || v === false || v === 0) return { value: undefined };
  return typeof v === "string" && saysNothing(v) ? { value: undefined } : undefined;
}

function tryNull(v: unknown): Converted<null> {
  if (typeof v === "bigint") return v === 0n ? { value: null } : undefined;
  if (typeof v === "boolean") return v === false ? { value: null } : undefined;
  if (isFiniteNumber(v)) return v === 0 ? { value: null } : undefined;
  if (v === null || v === undefined) return { value: null };
  return typeof v === "string" && saysNothing(v) ? { value: null } : undefined;
}

function tryBoolean(v: unknown): Converted<boolean> {
  if (typeof v === "bigint") return v === 0n ? { value: false } : v === 1n ? { value: true } : undefined;
  if (typeof v === "boolean") return { value: v };
  if (isFiniteNumber(v)) return v === 0 ? { value: false } : v === 1 ? { value: true } : undefined;
  if (v === null || v === undefined) return { value: false };
  if (typeof v !== "string") return undefined;
  const lower = v.toLowerCase();
  if (lower === "false" || v === "0") return { value: false };
  if (lower === "true" || v === "1") return { value: true };
  return undefined;
}

/** Ajv's `coerceTypes` for one type: `value` itself when it does not coerce. */
function coercePrimitive(v: unknown, t: string): unknown {
  switch (t) {
    case "number":
    case "integer": {
      if (v === null) return 0;
      if (typeof v === "string" && v.trim() !== "") {
        const n = Number(v);
        if (t === "number" ? Number.isFinite(n) : Number.isInteger(n)) return n;
      }
      if (typeof v === "boolean") return v ? 1 : 0;
      return v;
    }
    case "boolean":
      if (v === null) return false;
      if (v === "true" || v === 1) return true;
      if (v === "false" || v === 0) return false;
      return v;
    case "string":
      if (v === null) return "";
      return typeof v === "number" || typeof v === "boolean" ? String(v) : v;
    case "null":
      return v === "" || v === 0 || v === false ? null : v;
    default:
      return v;
  }
}
