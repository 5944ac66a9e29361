import { describe, expect, it } from "vitest";
import { providerKeyNames, toolEnvFor, withoutKeys } from "../../../worker/tools/tool-env.js";
import { TOOL_TAG_VAR } from "../../../shared/proc.js";
import { toolTag } from "../../../worker/tools/process-tree.js";

describe("providerKeyNames", () => {
  it.each([
    { settings: [], expected: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_API_KEY"] },
    { settings: ["GROQ_API_KEY"], expected: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_API_KEY", "GROQ_API_KEY"] },
    {
      settings: ["sk-literal-key", "!pass show key", "OPENAI_API_KEY"],
      expected: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_API_KEY"],
    },
  ])("$settings", ({ settings, expected }) => {
    expect(providerKeyNames(settings)).toEqual(expected);
  });
});

describe("withoutKeys", () => {
  it.each([
    {
      name: "drops names",
      env: { A: "1", OPENAI_API_KEY: "k" },
      scrub: { names: ["OPENAI_API_KEY"] },
      expected: { A: "1" },
    },
    {
      name: "drops copies of a key value",
      env: { A: "1", MY_COPY: "sk-x" },
      scrub: { names: [], values: ["sk-x"] },
      expected: { A: "1" },
    },
    {
      name: "drops the keys a supervisor took out of the key files",
      env: { A: "1", PI_ORCH_KEY_1: "sk-m", PI_ORCH_KEY_2: "sk-a" },
      scrub: { names: [] },
      expected: { A: "1" },
    },
    {
      name: "an empty value is not a key",
      env: { A: "", B: "2" },
      scrub: { names: [], values: [""] },
      expected: { A: "", B: "2" },
    },
  ])("$name", ({ env, scrub, expected }) => {
    expect(withoutKeys(env, scrub)).toEqual(expected);
  });
});

describe("toolEnvFor", () => {
  const env = { PATH: "/bin", ANTHROPIC_API_KEY: "a", GROQ_API_KEY: "g", LITERAL_COPY: "sk-lit", FLAG_COPY: "sk-flag" };
  // The supervisor's tag for the worker never reaches a tool (a `pi` it starts would take it as its own).
  const withWorkerTag = { ...env, PI_ORCH_WORKER_TAG: "agent-1.1" };
  it.each([
    {
      name: "removes built-in, models.json names, literal and --api-key copies",
      settings: ["GROQ_API_KEY", "sk-lit", "!cmd"],
      key: "sk-flag",
      inherit: false,
      expected: { PATH: "/bin" },
    },
    { name: "keeps everything when asked", settings: ["GROQ_API_KEY"], key: "sk-flag", inherit: true, expected: env },
    {
      name: "without settings only the built-in names go",
      settings: [],
      key: undefined,
      inherit: false,
      expected: { PATH: "/bin", GROQ_API_KEY: "g", LITERAL_COPY: "sk-lit", FLAG_COPY: "sk-flag" },
    },
  ])("$name", ({ settings, key, inherit, expected }) => {
    // Every tool environment also carries the worker's tool tag (it finds escaped processes at exit).
    expect(toolEnvFor(withWorkerTag, settings, key, inherit)).toEqual({ ...expected, [TOOL_TAG_VAR]: toolTag() });
  });
});
