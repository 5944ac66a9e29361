/**
 * Which of typebox's modules hold state of their own (scripts/typebox-state.mjs): the ones
 * the worker's build keeps to one copy, shared by the bundle and its chunks.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { hasModuleState, isStatefulTypeboxModule } from "../scripts/typebox-state.mjs";

const BUILD = resolve(import.meta.dirname, "../node_modules/typebox/build");

describe("typebox modules with module-level state", () => {
  it.each([
    ["a top-level let", "let locale = en_US;\nexport function Set(c) { locale = c; }", true],
    ["a top-level collection", "const formats = new Map();\nexport function Get(f) { return formats.get(f); }", true],
    [
      "an object it changes",
      "const settings = { a: 1 };\nexport function Set(o) { Object.defineProperty(settings, 'a', { value: o }); }",
      true,
    ],
    ["a counter in an array", "const index = [0];\nexport function Next() { return `${index[0]++}`; }", true],
    [
      "an array it pushes to",
      "const state = { variables: [] };\nexport function Add(v) { state.variables.push(v); }",
      true,
    ],
    ["a constant table", "const DAYS = [0, 31, 28];\nexport function Days(m) { return DAYS[m]; }", false],
    [
      "pure functions",
      "import { Guard } from './guard.mjs';\nexport function IsString(v) { return Guard.IsString(v); }",
      false,
    ],
    [
      "a let inside a function",
      "export function Count(xs) {\n    let n = 0;\n    for (const x of xs) n += x;\n    return n;\n}",
      false,
    ],
  ])("%s: %s", (_what, source, stateful) => {
    expect(hasModuleState(source)).toBe(stateful);
  });

  it("finds the format registry, the settings and the locale in the installed typebox, not its builders", () => {
    for (const module of ["format/_registry.mjs", "system/settings/settings.mjs", "system/locale/_config.mjs"])
      expect(isStatefulTypeboxModule(join(BUILD, module)), module).toBe(true);
    for (const module of ["type/types/string.mjs", "format/date.mjs", "schema/check.mjs"])
      expect(isStatefulTypeboxModule(join(BUILD, module)), module).toBe(false);
  });
});
