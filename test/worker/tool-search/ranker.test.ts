/** How `tool_search` ranks tools (pi 1.6.0's BM25 with name and namespace fields). */
import { describe, expect, it } from "vitest";
import { rankTools, searchDocument, tokenize } from "../../../worker/tool-search/ranker.js";

const tools = [
  { name: "mcp__gh__search_code", description: "Search code in repositories", parameters: { properties: { q: {} } } },
  {
    name: "mcp__gh__list_issues",
    description: "List the issues of a repository",
    parameters: { properties: { state: { description: "open or closed" } } },
  },
  { name: "mcp__shot__window", description: "Take a screenshot of a window", parameters: {} },
  {
    name: "mcp__shot__app",
    description: "Focus an app",
    parameters: { $ref: "#/$defs/a", $defs: { a: { description: "screenshot target" } } },
  },
  { name: "mcp__files__read_file", description: "Read a file. Mentions code code code code.", parameters: {} },
];
const docs = tools.map((t) => searchDocument(t, { name: t.name.split("__").slice(0, 2).join("__") }));
const rank = (query: string, limit = 3) => rankTools(query, docs, limit).map((m) => m.name);

describe("rankTools", () => {
  it.each([
    ["a query that is a tool's name ranks it first", "read_file", "mcp__files__read_file"],
    ["a term in the name beats mentions in the description", "code", "mcp__gh__search_code"],
    ["plural query terms find singular words", "issues", "mcp__gh__list_issues"],
    ["matching more terms beats a name match of one", "screenshot window", "mcp__shot__window"],
    ["schema descriptions through $ref count", "target", "mcp__shot__app"],
  ])("%s", (_, query, first) => {
    expect(rank(query)[0]).toBe(first);
  });

  it("finds nothing for stop words or an empty query, and keeps to the limit", () => {
    expect(rank("the of and")).toEqual([]);
    expect(rank("")).toEqual([]);
    expect(rank("screenshot code issues", 2)).toHaveLength(2);
  });

  it("tokenizes identifiers, case and stop words as pi does", () => {
    expect(tokenize("listIssues for the HTTPServer_config")).toEqual(["list", "issue", "http", "server", "config"]);
  });
});
