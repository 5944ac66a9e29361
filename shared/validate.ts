/**
 * Schema checks at the boundary: check values against a TypeBox schema and describe
 * failures by field path (`/message: must be string`). A value is first checked by our own
 * check of the schema (shared/schema-check.ts), which passes only what TypeBox passes; a value
 * it fails, or a schema it cannot check, goes to TypeBox, whose verdict and words are the
 * answer, so TypeBox is loaded (in the worker bundle, a file of its own) only then. TypeBox's
 * first check of a schema interprets it; the second compiles it. Compiling generates and
 * evaluates code, and the schema walk it makes got one of TypeBox's guards optimized by
 * TurboFan at every worker start (~3.7 MB more resident: the optimizing compiler's code and
 * memory) for the two entries a new session file starts with. Interpreting stays for one
 * check only: each one calls that guard ~50 times, and a supervisor's get_state pings,
 * interpreted, brought TurboFan in after ten of them.
 */
import type { Static, TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { Check, Errors } from "typebox/schema";
import { compileOwnCheck, type OwnCheck } from "./schema-check.js";

/** Outcome of a check: the typed value, or readable errors naming each field path. */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** A compiled checker for one schema. */
export type Checker<S extends TSchema> = (value: unknown) => CheckResult<Static<S>>;

const cache = new WeakMap<TSchema, Checker<TSchema>>();

/** Checks of one schema made by interpreting it; the next one compiles it. */
export const INTERPRETED_CHECKS = 1;

/**
 * Return a checker for a schema (one per schema object). Checkers are made at module
 * load, so nothing is compiled there: compiling them all cost every worker start ~8 ms
 * for schemas most runs never check; the first check interprets the schema.
 */
export function checker<S extends TSchema>(schema: S): Checker<S> {
  const cached = cache.get(schema);
  if (cached) return cached as Checker<S>;
  let compiled:
    | { Check(value: unknown): boolean; Errors(value: unknown): Iterable<{ instancePath: string; message: string }> }
    | undefined;
  let interpreted = 0;
  // Made at the first check (null: a schema our check does not cover).
  let own: OwnCheck | null | undefined;
  const check: Checker<S> = (value) => {
    if (own === undefined) own = compileOwnCheck(schema) ?? null;
    if (own?.(value)) return { ok: true, value: value as Static<S> };
    if (compiled === undefined && ++interpreted > INTERPRETED_CHECKS) compiled = Compile(schema as TSchema);
    if (compiled ? compiled.Check(value) : Check(schema, value)) return { ok: true, value: value as Static<S> };
    const errors: string[] = [];
    for (const error of compiled ? compiled.Errors(value) : Errors(schema, value)[1]) {
      const path = error.instancePath === "" ? "/" : error.instancePath;
      errors.push(`${path}: ${error.message}`);
      if (errors.length >= 10) break;
    }
    return { ok: false, errors: errors.length > 0 ? errors : ["/: does not match the schema"] };
  };
  cache.set(schema, check as Checker<TSchema>);
  compilers.set(schema, () => {
    own ??= compileOwnCheck(schema) ?? null;
    if (own === null) compiled ??= Compile(schema as TSchema);
  });
  return check;
}

/** Each checker's way to compile its schema ahead of its second check. */
const compilers = new WeakMap<TSchema, () => void>();

/**
 * Make the checker of `schema` ready now rather than at its first checks: our own check of it,
 * or TypeBox's compiled one for a schema ours does not cover. For the build of the worker's
 * startup snapshot (cli/pi.ts): done once there, every worker started from it checks the
 * entries its start writes with it, neither interpreting the schema (~1.8 ms of a start's
 * CPU, profiled, with TypeBox's) nor compiling it (nor waking TurboFan for it).
 */
export function compileChecker(schema: TSchema): void {
  checker(schema);
  compilers.get(schema)?.();
}
