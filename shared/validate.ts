/**
 * Schema checks at the boundary: compile a TypeBox schema once, then check values
 * and describe failures by field path (`/message: must be string`).
 */
import type { Static, TSchema } from "typebox";
import { Compile } from "typebox/compile";

/** Outcome of a check: the typed value, or readable errors naming each field path. */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** A compiled checker for one schema. */
export type Checker<S extends TSchema> = (value: unknown) => CheckResult<Static<S>>;

const cache = new WeakMap<TSchema, Checker<TSchema>>();

/** Compile (once per schema object) and return a checker. */
export function checker<S extends TSchema>(schema: S): Checker<S> {
  const cached = cache.get(schema);
  if (cached) return cached as Checker<S>;
  const compiled = Compile(schema);
  const check: Checker<S> = (value) => {
    if (compiled.Check(value)) return { ok: true, value: value as Static<S> };
    const errors: string[] = [];
    for (const error of compiled.Errors(value)) {
      const path = error.instancePath === "" ? "/" : error.instancePath;
      errors.push(`${path}: ${error.message}`);
      if (errors.length >= 10) break;
    }
    return { ok: false, errors: errors.length > 0 ? errors : ["/: does not match the schema"] };
  };
  cache.set(schema, check as Checker<TSchema>);
  return check;
}
