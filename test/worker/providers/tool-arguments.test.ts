import { describe, expect, it } from "vitest";
import { parseToolCallArguments, repairJson } from "../../../worker/providers/tool-arguments.js";

// pi 1.6's pi-ai (utils/json-parse.js), case by case; the error texts as Node 22 words them.
describe("a finished tool call's argument text, as pi 1.6 parses it", () => {
  it.each([
    ['{"a":"x\ty"}', '{"a":"x\\ty"}'],
    ['{"a":"x\u0001"}', '{"a":"x\\u0001"}'],
    ['{"a":"\\q"}', '{"a":"\\\\q"}'],
    ['{"a":"\\u12"}', '{"a":"\\\\u12"}'],
    ['{"a":"\\u00e9\\n"}', '{"a":"\\u00e9\\n"}'],
    ['{"a":\t1}', '{"a":\t1}'],
    ['{"a":"end\\', '{"a":"end\\\\'],
  ])("repairs %j as %j", (text, repaired) => {
    expect(repairJson(text)).toBe(repaired);
  });

  it.each([
    ["", { arguments: {} }],
    ["  ", { arguments: {} }],
    ['{"a":1}', { arguments: { a: 1 } }],
    ['{"a":"x\ny"}', { arguments: { a: "x\ny" } }],
    ["[1]", { arguments: {}, argumentsError: "Tool arguments must be a JSON object\n\nReceived arguments:\n[1]" }],
    ["null", { arguments: {}, argumentsError: "Tool arguments must be a JSON object\n\nReceived arguments:\nnull" }],
    [
      '{"a":1',
      {
        arguments: {},
        argumentsError:
          "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)\n\nReceived arguments:\n{\"a\":1",
      },
    ],
    [
      '{\n  "a": 1\n  "b"}',
      {
        arguments: {},
        argumentsError:
          "Expected ',' or '}' after property value in JSON at position 13 (line 3 column 3)\n\nReceived arguments:\n{\n  \"a\": 1\n  \"b\"}",
      },
    ],
  ])("parses %j", (text, parsed) => {
    expect(parseToolCallArguments(text)).toEqual(parsed);
  });
});
