/** pi's keybindings.json as `pi` on a terminal reads it: key names, a user's keys, old names, what is left out. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  bindingsFrom,
  DEFAULT_KEYBINDINGS,
  loadKeybindings,
  sequenceName,
  specName,
} from "../../../cli/tui/keybindings.js";

describe("keybindings", () => {
  it.each([
    ["ctrl+g", "C-g", "\x07"],
    ["alt+enter", "M-return", "\x1b\r"],
    ["alt+up", "M-up", "\x1b[1;3A"],
    ["shift+tab", "S-tab", "\x1b[Z"],
    ["shift+enter", "S-return", "\x1b[13;2u"],
    ["ctrl+j", "C-j", "\n"],
    ["escape", "escape", "\x1b"],
    ["Esc", "escape", "\x1b"],
    ["enter", "return", "\r"],
    ["shift+a", "A", "A"],
  ])("%s is what the terminal sends as %s", (spec, name, seq) => {
    expect(specName(spec)).toBe(name);
    expect(sequenceName(seq)).toBe(name);
  });

  it("gives a key no terminal sends without the kitty protocol a name no key has", () => {
    expect(specName("ctrl+shift+p")).not.toBe(sequenceName("\x10"));
    expect(specName("super+k")).not.toBe(sequenceName("k"));
  });

  it("has pi's defaults", () => {
    expect(DEFAULT_KEYBINDINGS.action("C-g")).toBe("app.editor.external");
    expect(DEFAULT_KEYBINDINGS.action("C-z")).toBe("app.suspend");
    expect(DEFAULT_KEYBINDINGS.action("C-t")).toBe("app.thinking.toggle");
    expect(DEFAULT_KEYBINDINGS.action("M-return")).toBe("app.message.followUp");
    expect(DEFAULT_KEYBINDINGS.keysOf("app.session.tree")).toEqual([]);
  });

  it("replaces an action's keys, unbinds with [], reads pi's old names, and says what it left out", () => {
    const { bindings, ignored } = bindingsFrom({
      $schema: "https://pi.dev/schemas/keybindings.schema.json",
      "app.session.tree": ["ctrl+y", "alt+t"],
      "app.tools.expand": [],
      toggleThinking: "ctrl+b",
      "app.nope": "ctrl+q",
      "app.model.select": "hyper+x",
    });
    expect(bindings.action("C-y")).toBe("app.session.tree");
    expect(bindings.action("M-t")).toBe("app.session.tree");
    expect(bindings.action("C-o")).toBeUndefined();
    expect(bindings.action("C-b")).toBe("app.thinking.toggle");
    expect(bindings.action("C-t")).toBeUndefined();
    expect(bindings.action("C-l")).toBe("app.model.select");
    expect(ignored.join("; ")).toMatch(/app\.nope \(not an action this terminal has\).*app\.model\.select \(/);
  });

  it("an action the user bound wins a key it shares with a default", () => {
    const { bindings } = bindingsFrom({ "app.session.new": "ctrl+t" });
    expect(bindings.action("C-t")).toBe("app.session.new");
  });

  it("uses pi's defaults, saying why, when the file is not a JSON object", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-keys-"));
    try {
      writeFileSync(join(dir, "keybindings.json"), "{ not json");
      const r = loadKeybindings(dir);
      expect(r.bindings).toBe(DEFAULT_KEYBINDINGS);
      expect(r.notices[0]).toMatch(/keybindings\.json is not JSON .*pi's default keys apply/);
      writeFileSync(join(dir, "keybindings.json"), '{"app.suspend": "ctrl+q"}');
      expect(loadKeybindings(dir).bindings.action("C-q")).toBe("app.suspend");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
