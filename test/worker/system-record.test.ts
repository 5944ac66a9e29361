import { describe, expect, it } from "vitest";
import type { AgentMessage, SystemMessage } from "../../shared/schema/messages.js";
import { diffSections, restoredToolNames, systemUpdate } from "../../worker/core/system-record.js";

const tool = (name: string, description = `${name} tool`) => ({ name, description, parameters: { type: "object" } });
const system = (fields: Partial<SystemMessage>): AgentMessage => ({
  role: "system",
  content: "",
  timestamp: 1,
  ...fields,
});
const user: AgentMessage = { role: "user", content: "hi", timestamp: 2 };

describe("diffSections", () => {
  it.each([
    ["nothing recorded: every section", {}, { preamble: "p", cwd: "c" }, { preamble: "p", cwd: "c" }],
    ["the same: no patch", { preamble: "p" }, { preamble: "p" }, undefined],
    [
      "a changed and a new one",
      { preamble: "p", cwd: "c" },
      { preamble: "p", cwd: "d", skills: "s" },
      { cwd: "d", skills: "s" },
    ],
    ["a gone one is null", { preamble: "p", skills: "s" }, { preamble: "p" }, { skills: null }],
  ])("%s", (_name, previous, wanted, patch) => {
    expect(diffSections(previous, wanted)).toEqual(patch);
  });
});

describe("systemUpdate", () => {
  it("declares everything on a fresh transcript, then nothing while nothing changes", () => {
    const first = systemUpdate([], { preamble: "p" }, [tool("read"), tool("bash")], 5);
    expect(first).toEqual({
      role: "system",
      content: "",
      sections: { preamble: "p" },
      toolsAdded: [tool("read"), tool("bash")],
      timestamp: 5,
    });
    expect(systemUpdate([first!, user], { preamble: "p" }, [tool("read"), tool("bash")], 6)).toBeUndefined();
  });

  it("declares only what changed: a removed tool, a redefined one (removed and added), a section", () => {
    const transcript = [
      system({ sections: { preamble: "p", cwd: "a" }, toolsAdded: [tool("read"), tool("bash")] }),
      user,
    ];
    expect(systemUpdate(transcript, { preamble: "p", cwd: "b" }, [tool("read", "reads better")], 7)).toEqual({
      role: "system",
      content: "",
      sections: { cwd: "b" },
      toolsAdded: [tool("read", "reads better")],
      toolsRemoved: [{ name: "read" }, { name: "bash" }],
      timestamp: 7,
    });
  });

  it("replays patches in order: a later system message wins over an earlier one", () => {
    const transcript = [
      system({ sections: { preamble: "p", skills: "s" }, toolsAdded: [tool("read"), tool("bash")] }),
      user,
      system({ sections: { skills: null }, toolsRemoved: [{ name: "bash" }] }),
    ];
    expect(systemUpdate(transcript, { preamble: "p" }, [tool("read")], 8)).toBeUndefined();
  });
});

describe("restoredToolNames", () => {
  const transcript = [
    system({ toolsAdded: [tool("read"), tool("bash"), tool("deploy")] }),
    user,
    system({ toolsRemoved: [{ name: "bash" }] }),
  ];

  it("brings back what the transcript leaves declared, and activates extension tools it never mentioned", () => {
    expect(restoredToolNames(transcript, ["deploy", "lint"])).toEqual(["read", "deploy", "lint"]);
  });

  it("keeps a removed extension tool off, and applies +name/-name after", () => {
    expect(restoredToolNames(transcript, ["bash"], ["+grep", "-read"])).toEqual(["deploy", "grep"]);
  });

  it("is undefined for a transcript that declares no tools (an older session keeps the current tools)", () => {
    expect(restoredToolNames([user], ["deploy"])).toBeUndefined();
    expect(restoredToolNames([system({ sections: { preamble: "p" } }), user], [])).toBeUndefined();
  });
});
