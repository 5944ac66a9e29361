import { describe, expect, it } from "vitest";
import { invokedAs } from "../../cli/commands/demo-run.js";

describe("the program name the demo's next steps use", () => {
  it.each([
    { env: { npm_command: "exec" }, want: "npx pi-orch" },
    { env: { npm_command: "test" }, want: "pi-orch" },
    { env: {}, want: "pi-orch" },
  ])("$want for $env", ({ env, want }) => {
    expect(invokedAs(env)).toBe(want);
  });
});
