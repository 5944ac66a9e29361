import { describe, expect, it } from "vitest";
import { dialogHint } from "../../cli/commands/prompt-actions.js";

describe("dialogHint: what pi-orch prompt says while an agent's dialog waits", () => {
  it.each([
    {
      name: "confirm",
      event: { type: "extension_ui_request", id: "d1", method: "confirm", title: "Delete?", message: "3 files" },
      asks: '(confirm) "Delete?: 3 files"',
      answer: { confirmed: true },
    },
    {
      name: "select names its first option",
      event: { type: "extension_ui_request", id: "d2", method: "select", title: "Pick", options: ["Allow", "Block"] },
      asks: '(select) "Pick"',
      answer: { value: "Allow" },
    },
    {
      name: "input",
      event: { type: "extension_ui_request", id: "d3", method: "input", title: "Enter a value", placeholder: "…" },
      asks: '(input) "Enter a value"',
      answer: { value: "TEXT" },
    },
    {
      name: "editor",
      event: { type: "extension_ui_request", id: "d4", method: "editor", title: "Edit" },
      asks: '(editor) "Edit"',
      answer: { value: "TEXT" },
    },
  ])("$name", ({ event, asks, answer }) => {
    const hint = dialogHint("bob", event)!;
    expect(hint).toContain(`bob asks ${asks}`);
    const reply = /pi-orch rpc bob '([^']+)'/.exec(hint)![1]!;
    expect(JSON.parse(reply)).toEqual({ type: "extension_ui_response", id: event.id, ...answer });
    expect(hint).toContain(`'{"type":"extension_ui_response","id":"${event.id}","cancelled":true}' dismisses it`);
  });

  it.each([
    {
      name: "a fire-and-forget request",
      event: { type: "extension_ui_request", id: "n", method: "notify", message: "hi" },
    },
    { name: "a request without an id", event: { type: "extension_ui_request", method: "confirm", title: "x" } },
    { name: "another event", event: { type: "agent_start" } },
  ])("nothing for $name", ({ event }) => expect(dialogHint("bob", event)).toBeNull());
});
