import { describe, expect, it } from "vitest";
import { parseScriptSource, scriptIdentifier } from "../../worker/codemode/source.js";

describe("a codemode script's options line", () => {
  it.each([
    ["return 1;", { code: "return 1;", options: {} }],
    ['// @options: {"timeout_ms": 500}\nreturn 1;', { code: "\nreturn 1;", options: { timeoutMs: 500 } }],
    [
      '  // @options: {"max_output_tokens": 0, "timeout_ms": 1}\r\nx',
      { code: "\nx", options: { maxOutputTokens: 0, timeoutMs: 1 } },
    ],
  ])("%j splits into the script and its options", (input, expected) => {
    expect(parseScriptSource(input)).toEqual(expected);
  });

  it.each([
    ["   ", /Expected JavaScript source text/],
    ['// @options: {"timeout_ms": 5}', /must be followed by JavaScript source/],
    ['x\n// @options: {"timeout_ms": 5}', /must be the first line of the input; found one on line 2/],
    ["// @options: {nope}\nx", /@options must be valid JSON/],
    ["// @options: []\nx", /must be a JSON object/],
    ['// @options: {"memory": 1}\nx', /only supports `max_output_tokens` and `timeout_ms`; got `memory`/],
    ['// @options: {"timeout_ms": 0}\nx', /`timeout_ms` must be a positive integer/],
    ['// @options: {"max_output_tokens": -1}\nx', /`max_output_tokens` must be a non-negative safe integer/],
  ])("%j is refused before the script runs", (input, error) => {
    expect(() => parseScriptSource(input)).toThrow(error);
  });

  it.each([
    ["mcp__probe__add", "mcp__probe__add"],
    ["my-tool", "my_tool"],
    ["9lives", "_lives"],
    ["", "_"],
  ])("the tool %j is called as tools.%s", (name, id) => {
    expect(scriptIdentifier(name)).toBe(id);
  });
});
