/** The list above pi's editor: /commands, @ files by a fuzzy query, paths after Tab, and what Tab and Enter take. */
import { describe, expect, it } from "vitest";
import { fuzzyPaths } from "../../../cli/tui/file-completions.js";
import { lineState } from "../../../cli/tui/line-editor.js";
import { completions } from "../../../cli/tui/slash-commands.js";
import { suggestions, tabCompletion, type SuggestionSources } from "../../../cli/tui/suggestions.js";

const PATHS = ["README.md", "src/", "src/main.ts", "src/maps/", "src/maps/world.ts", "test/", "test/main.test.ts"];
const sources: SuggestionSources = {
  commands: (text) => completions(text, []),
  files: (q) => fuzzyPaths(PATHS, q, 50),
  entries: (prefix) =>
    PATHS.filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).replace(/\/$/, "").includes("/")),
};

describe("suggestions", () => {
  it("ranks a fuzzy query: inside the name first, then the shorter path", () => {
    expect(fuzzyPaths(PATHS, "main", 5)).toEqual(["src/main.ts", "test/main.test.ts"]);
    expect(fuzzyPaths(PATHS, "smw", 5)).toEqual(["src/maps/world.ts"]);
    expect(fuzzyPaths(PATHS, "", 2)).toEqual(["README.md", "src/"]);
  });

  it("@ lists files and puts the one taken in place of the word, a space after a file", () => {
    const line = { text: "look at @mai and say", cursor: 12, pasting: false };
    const list = suggestions(line, sources, false);
    expect(list.map((s) => s.label)).toEqual(["src/main.ts", "test/main.test.ts"]);
    expect(list[0]!.line).toEqual({ text: "look at @src/main.ts  and say", cursor: 21, pasting: false });
    expect(list[0]!.takeOnEnter).toBe(true);
    expect(suggestions(lineState("@maps"), sources, false)[0]!.line.text).toBe("@src/maps/");
  });

  it("a path lists its folder only after Tab; Tab takes the one match or the common start", () => {
    expect(suggestions(lineState("read src/ma"), sources, false)).toEqual([]);
    const list = suggestions(lineState("read src/ma"), sources, true);
    expect(list.map((s) => s.label)).toEqual(["src/main.ts", "src/maps/"]);
    expect(tabCompletion(lineState("read src/ma"), list)?.text).toBe("read src/ma");
    const one = suggestions(lineState("read src/mai"), sources, true);
    expect(tabCompletion(lineState("read src/mai"), one)?.text).toBe("read src/main.ts");
    const two = suggestions(lineState("read te"), sources, true);
    expect(tabCompletion(lineState("read te"), two)?.text).toBe("read test/");
  });

  it("/ lists commands, which Tab completes and Enter leaves to run", () => {
    const list = suggestions(lineState("/tre"), sources, false);
    expect(list[0]).toMatchObject({ label: "/tree", takeOnEnter: false });
    expect(tabCompletion(lineState("/tre"), list)?.text).toBe("/tree ");
  });
});
