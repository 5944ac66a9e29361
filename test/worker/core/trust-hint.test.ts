import { describe, expect, it } from "vitest";
import { trustHint } from "../../../worker/core/trust-hint.js";

describe("trustHint", () => {
  it("tells pi's user --trust, or --approve for one run", () => {
    expect(trustHint({})).toBe("run with --trust to allow it, or --approve for this run only");
  });

  it("tells a fleet agent's user spawn --approve, naming the agent to remove first", () => {
    expect(trustHint({ PI_ORCH_AGENT: "fix-login" })).toBe(
      "to allow it, spawn the agent again with pi-orch spawn --approve (pi-orch rm fix-login first)",
    );
  });
});
