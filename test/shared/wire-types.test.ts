/**
 * Every wire message is declared once: each `type` literal of every schema in
 * shared/schema/ belongs to one message. Two shapes may share a `type` only as the
 * variants of one message, told apart by another literal field (a response's
 * `success: true` / `success: false`).
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SCHEMA_DIR = resolve(import.meta.dirname, "../../shared/schema");

type Schema = {
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  items?: Schema;
  const?: unknown;
  [key: string]: unknown;
};

/** Every object schema reachable from `root` (through unions, properties, arrays and records). */
function objectSchemas(root: unknown, seen: Set<Schema>): void {
  if (typeof root !== "object" || root === null || seen.has(root as Schema)) return;
  const schema = root as Schema;
  seen.add(schema);
  for (const value of Object.values(schema)) {
    if (Array.isArray(value)) for (const v of value) objectSchemas(v, seen);
    else objectSchemas(value, seen);
  }
}

/** The literal fields of an object schema besides `type`, as `name=value`. */
function otherLiterals(schema: Schema): string[] {
  return Object.entries(schema.properties ?? {})
    .filter(([name, p]) => name !== "type" && typeof p?.const !== "undefined")
    .map(([name, p]) => `${name}=${JSON.stringify(p.const)}`);
}

async function declarations(): Promise<Map<string, Schema[]>> {
  const seen = new Set<Schema>();
  const files = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith(".ts"));
  for (const file of files) objectSchemas(await import(join(SCHEMA_DIR, file)), seen);
  const byType = new Map<string, Schema[]>();
  for (const schema of seen) {
    const literal = schema.properties?.type?.const;
    if (typeof literal !== "string") continue;
    byType.set(literal, [...(byType.get(literal) ?? []), schema]);
  }
  return byType;
}

describe("wire types", () => {
  it("declares each type literal of shared/schema exactly once", async () => {
    const byType = await declarations();
    // The messages of every boundary are there (a sanity check that the walk reaches them).
    for (const t of [
      "prompt",
      "response",
      "agent_start",
      "agent_status",
      "worker_exited",
      "spawn",
      "subscribe",
      "event",
      "lagged",
    ]) {
      expect(byType.has(t), `no schema declares type "${t}"`).toBe(true);
    }
    const duplicated: string[] = [];
    for (const [literal, schemas] of byType) {
      if (schemas.length === 1) continue;
      // Variants of one message: each tells itself apart by another literal field.
      const keys = schemas.map((s) => otherLiterals(s).sort().join(","));
      const variants = keys.every((k) => k !== "") && new Set(keys).size === keys.length;
      if (!variants) duplicated.push(`"${literal}" is declared ${schemas.length} times`);
    }
    expect(duplicated).toEqual([]);
  });
});
