import { describe, expect, it } from "vitest";
import { terminalText } from "../../shared/terminal-text.js";

describe("terminalText: control characters from tools shown, not obeyed", () => {
  it.each([
    { input: "plain text\n\twith a tab", colour: false, want: "plain text\n\twith a tab" },
    { input: "\x1b]0;PWNED\x07\x1b[2Jhi", colour: false, want: "\\x1b]0;PWNED\\x07\\x1b[2Jhi" },
    { input: "progress 10%\rprogress 99%", colour: false, want: "progress 10%\\rprogress 99%" },
    { input: "back\bspace \x7f del \x9b csi", colour: false, want: "back\\bspace \\x7f del \\x9b csi" },
    { input: "admin\u202e}nimda{", colour: false, want: "admin\\u{202e}}nimda{" },
    // Our own colour codes stay when colour is on; any other escape does not.
    { input: "\x1b[31mred\x1b[39m \x1b[1mbold\x1b[22m", colour: true, want: "\x1b[31mred\x1b[39m \x1b[1mbold\x1b[22m" },
    { input: "\x1b[31mred\x1b[39m", colour: false, want: "\\x1b[31mred\\x1b[39m" },
    { input: "\x1b[2J\x1b[38;5;1mx", colour: true, want: "\\x1b[2J\\x1b[38;5;1mx" },
    { input: "é€😀 unicode", colour: true, want: "é€😀 unicode" },
  ])("$input (colour $colour)", ({ input, colour, want }) => {
    expect(terminalText(input, colour)).toBe(want);
  });

  it("leaves no byte below 0x20 but newline and tab when colour is off", () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join("");
    const out = terminalText(all);
    expect([...out].filter((ch) => ch.charCodeAt(0) < 0x20 && ch !== "\n" && ch !== "\t")).toEqual([]);
    expect(/[\x7f-\x9f]/.test(out)).toBe(false);
  });
});
