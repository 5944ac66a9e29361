import { describe, expect, it } from "vitest";
import { mergeDefaultTools, resolveDefaultTools } from "../../worker/tools/default-tools.js";

describe("the defaultTools setting, as pi 1.6 reads it", () => {
  it.each<[string[], string[]]>([
    [[], []],
    [["+grep"], ["read", "bash", "edit", "write", "grep"]],
    [
      ["-bash", "+ls", "-ls"],
      ["read", "edit", "write"],
    ],
    [
      ["read", "ls"],
      ["read", "ls"],
    ],
    [["read", "+find", "-read"], ["find"]],
    [["+read"], ["read", "bash", "edit", "write"]],
  ])("%j activates %j", (entries, tools) => {
    expect(resolveDefaultTools(entries)).toEqual(tools);
  });

  it.each<[string[] | undefined, string[] | undefined, string[] | undefined]>([
    [undefined, undefined, undefined],
    [["read"], undefined, ["read"]],
    [undefined, ["+ls"], ["+ls"]],
    [["read"], ["+ls", "-read"], ["read", "+ls", "-read"]],
    [["read"], ["bash"], ["bash"]],
    [["read"], ["bash", "+ls"], ["bash", "+ls"]],
  ])("user %j under project %j merge to %j", (user, project, merged) => {
    expect(mergeDefaultTools(user, project)).toEqual(merged);
  });
});
