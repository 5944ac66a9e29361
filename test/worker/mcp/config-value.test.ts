/** `env` and `headers` values of MCP servers: `${VAR}`, `$VAR` and the escapes, as pi 1.6.0 resolves them. */
import { describe, expect, it } from "vitest";
import { parseTemplate } from "../../../shared/config-template.js";
import { resolveConfigValue } from "../../../worker/mcp/config-value.js";

describe("config values", () => {
  const env = { TOKEN: "t0k", OTHER: "o" };
  it.each([
    ["Bearer ${TOKEN}", "Bearer t0k"],
    ["$TOKEN-$OTHER", "t0k-o"],
    ["cost $$5 $!", "cost $5 !"],
    ["${not a name}", "${not a name}"],
    ["plain", "plain"],
  ])("%s is %s", (value, resolved) => {
    expect(resolveConfigValue(value, "x", env)).toBe(resolved);
  });
  it("names the field and the missing variables", () => {
    expect(() => resolveConfigValue("${NOPE}", 'MCP server "s" header "A"', env)).toThrow(
      'Failed to resolve MCP server "s" header "A" from environment variable: NOPE',
    );
    expect(() => resolveConfigValue("$A$B", "v", env)).toThrow("from environment variables: A, B");
    expect(parseTemplate("a${B}c")).toEqual([
      { type: "literal", value: "a" },
      { type: "env", name: "B" },
      { type: "literal", value: "c" },
    ]);
  });
});
