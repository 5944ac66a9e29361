/** MCP tool names and exposure as pi 1.6.0 makes them. */
import { describe, expect, it } from "vitest";
import { mcpNamespace, mcpToolName, toolExposure } from "../../../worker/mcp/names.js";

describe("mcpToolName", () => {
  it("sanitizes, and adds a hash when too long or taken", () => {
    expect(mcpToolName("dev-radius", "get.item")).toBe("mcp__dev_radius__get_item");
    const taken = mcpToolName("s", "a_b", (n) => n === "mcp__s__a_b");
    expect(taken).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/);
    const long = mcpToolName("server", "x".repeat(80));
    expect(long).toHaveLength(64);
    expect(mcpNamespace("dev-radius")).toBe("mcp__dev_radius");
  });
});

describe("toolExposure", () => {
  const config = {
    command: "x",
    exposure: "deferred" as const,
    toolExposure: { search_code: "direct" as const, "get_*": "codemode" as const, "*_x": "hidden" as const },
  };
  it.each([
    ["search_code", "direct"],
    ["get_x", "codemode"],
    ["delete_x", "hidden"],
    ["other", "deferred"],
  ])("%s is %s", (tool, exposure) => {
    expect(toolExposure(config, tool)).toBe(exposure);
  });
  it("defaults to codemode", () => {
    expect(toolExposure({ command: "x" }, "t")).toBe("codemode");
  });
});
