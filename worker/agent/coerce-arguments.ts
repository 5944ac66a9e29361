/**
 * A model's tool call arguments made into what the tool's schema most likely meant, before
 * they are checked (pi 1.5's breaking change: pi-schema coerces tool arguments): an
 * optional property given as `null` is left out, then TypeBox's `Value.Convert` rules
 * apply (`"5"` for a number is 5, `"true"` for a boolean is true, a single value for an
 * array is a one-item array). A value that cannot be converted is left as it is, and the
 * check reports it. The input is never changed.
 */
import type { TSchema } from "typebox";
import { Check } from "typebox/schema";
import { Convert } from "typebox/value";

type Node = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The arguments coerced to `schema`, as a new value. */
export function coerceArguments(schema: TSchema, value: unknown): unknown {
  if (!isPlainObject(value) && !Array.isArray(value)) return value;
  const copy = withoutOptionalNulls(schema as unknown as Node, structuredClone(value));
  // Convert changes what it is given, so it gets the copy.
  return Convert(schema, copy);
}

/** `value` without the `null`s of optional properties whose schema refuses null (pi-schema's first pass). */
function withoutOptionalNulls(schema: Node, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return isPlainObject(items) ? value.map((item) => withoutOptionalNulls(items, item)) : value;
  }
  if (!isPlainObject(value) || !isPlainObject(schema.properties)) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(value, key) || !isPlainObject(property)) continue;
    if (value[key] === null && !required.has(key) && !Check(property as TSchema, null)) delete value[key];
    else value[key] = withoutOptionalNulls(property, value[key]);
  }
  return value;
}
