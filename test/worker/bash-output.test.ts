import { describe, expect, it } from "vitest";
import { plainBashOutput } from "../../worker/core/bash-output.js";

describe("plainBashOutput (the RPC bash command's output, as pi returns it)", () => {
  it.each([
    { name: "colours", raw: "plain \u001b[31mred\u001b[0m", plain: "plain red" },
    { name: "CRLF and progress CRs", raw: "a\r\nb\r50%\r100%\n", plain: "a\nb50%100%\n" },
    { name: "cursor movement and OSC title", raw: "\u001b[2K\u001b[1Gx\u001b]0;title\u0007y", plain: "xy" },
    { name: "other control characters go, tabs stay", raw: "a\u0000b\u0007c\td", plain: "abc\td" },
    { name: "unicode stays", raw: "café ✓ 漢字", plain: "café ✓ 漢字" },
  ])("$name", ({ raw, plain }) => expect(plainBashOutput(raw)).toBe(plain));
});
