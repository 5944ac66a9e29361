/**
 * pi's editor and keys on a real terminal (issue 28): one `pi --provider faux` with a
 * scripted model runs under an interactive bash in tmux (so Ctrl+Z has job control), and
 * one walk presses what a pi user presses: `@` file search, Tab path completion, Ctrl+G
 * (an external editor that shows on the normal screen), Ctrl+T, keys rebound in
 * keybindings.json, Alt+Enter and Alt+Up while a reply streams, Esc, Ctrl+Z and `fg`,
 * Ctrl+D. pi 1.6.0 itself, in the same setup, reads the same keybindings.json, completes
 * the same paths and takes the same editor's text. Skipped (with the reason) where tmux, or
 * pi 1.6.0 for its part, is not installed.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "vitest";
import { PI_BIN, tempDir } from "../support/rpc-worker.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";
import { HAS_TMUX, terminalEnv, TmuxDriver } from "../support/tmux.js";

describe.skipIf(!HAS_TMUX)("pi's keys on a terminal, in tmux (skipped: tmux is not installed)", () => {
  let dir: { path: string; cleanup: () => void };
  let t: TmuxDriver;
  let agentDir: string;

  beforeEach(() => {
    dir = tempDir("pi-orch-pi-keys-");
    agentDir = join(dir.path, "agent");
    const project = join(dir.path, "project");
    mkdirSync(join(project, "src"), { recursive: true });
    mkdirSync(agentDir);
    writeFileSync(join(project, "src", "main.ts"), "export {};\n");
    writeFileSync(join(project, "README.md"), "# project\n");
    // A user's keys, as pi reads them: expand moved to Ctrl+Y, /tree given Alt+T.
    writeFileSync(
      join(agentDir, "keybindings.json"),
      JSON.stringify({ "app.tools.expand": "ctrl+y", "app.session.tree": ["alt+t"] }),
    );
    // The external editor says it runs, waits for Enter, and adds to the prompt.
    const editor = join(dir.path, "editor.sh");
    writeFileSync(editor, `#!/bin/sh\necho "EDITOR HAS $1"\nread line\nprintf ' and more from the editor' >> "$1"\n`);
    chmodSync(editor, 0o755);
    writeFileSync(
      join(dir.path, "script.jsonl"),
      [
        { thinking: "weighing the secret plan", text: "first answer" },
        { toolCalls: [{ name: "bash", arguments: { command: "seq 1 12" } }] },
        { text: "counted to twelve" },
        { text: "too late", delayMs: 60_000 },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    const env = (): NodeJS.ProcessEnv => ({
      ...terminalEnv(process.env),
      NO_COLOR: "1",
      PI_CODING_AGENT_DIR: agentDir,
      PI_ORCH_HOME: "",
      EDITOR: editor,
      VISUAL: "",
      // pi 1.6.0 only: a model to start with (nothing is sent), and no download of fd.
      ANTHROPIC_API_KEY: "sk-ant-never-sent",
      PI_OFFLINE: "1",
    });
    t = new TmuxDriver(join(dir.path, "tmux.sock"), env);
  });
  afterEach(() => {
    t.kill();
    dir.cleanup();
  });

  it("@ files, Tab paths, Ctrl+G, Ctrl+T, rebound keys, Alt+Enter and Alt+Up, Esc, Ctrl+Z and fg, Ctrl+D", async () => {
    const s = "keys";
    t.open(s, { cols: 120, rows: 40, cwd: join(dir.path, "project") }, "bash --norc --noprofile -i");
    t.type(s, "PS1='shell$ '");
    await t.until(s, "the shell", (x) => x.includes("shell$"));
    t.type(s, `${process.execPath} ${PI_BIN} --provider faux --faux-script ${join(dir.path, "script.jsonl")}`);
    await t.until(s, "pi", (x) => x.includes("prompt>"));
    const idle = (what: string, test: (x: string) => boolean) =>
      t.until(s, what, (x) => test(x) && x.includes("prompt>") && !x.includes("↑↓ choose"));

    // @ lists the project's files by a fuzzy query; Enter puts the first in place of the word.
    t.write(s, "read @mai");
    await t.until(s, "the file list", (x) => x.includes("→ src/main.ts"));
    t.keys(s, "Enter");
    await idle("the file in the prompt", (x) => /prompt> read @src\/main\.ts\s+║/.test(x));
    // Tab completes a path: the folder, then its one match.
    t.keys(s, "C-u");
    t.write(s, "cat sr");
    t.keys(s, "Tab");
    await idle("the folder", (x) => /prompt> cat src\/\s+║/.test(x));
    t.keys(s, "Tab");
    await idle("the file", (x) => /prompt> cat src\/main\.ts\s+║/.test(x));

    // Ctrl+G: the prompt in $EDITOR on the normal screen, its text back in the editor.
    t.keys(s, "C-u");
    t.write(s, "draft");
    t.keys(s, "C-g");
    await t.until(s, "the external editor", (x) => x.includes("EDITOR HAS") && !x.includes("prompt>"));
    t.keys(s, "Enter");
    await idle("the edited prompt", (x) => x.includes("prompt> draft and more from the editor"));
    t.keys(s, "C-u");

    // Ctrl+T hides the thinking blocks, as one "Thinking..." line.
    t.type(s, "think first");
    await idle("the reply", (x) => x.includes("weighing the secret plan") && x.includes("first answer"));
    t.keys(s, "C-t");
    await idle("thinking hidden", (x) => x.includes("Thinking...") && !x.includes("weighing the secret plan"));

    // keybindings.json: Ctrl+O no longer expands, Ctrl+Y does (had Ctrl+O toggled, Ctrl+Y would fold again).
    t.type(s, "count");
    await idle("the folded result", (x) => x.includes("counted to twelve") && x.includes("… (+9 lines)"));
    t.keys(s, "C-o");
    t.keys(s, "C-y");
    await idle("the expanded result", (x) => x.includes("Tool output: expanded") && /║ {5}12\s+║/.test(x));
    t.keys(s, "M-t");
    await t.until(s, "Alt+T: the tree", (x) => x.includes("Session tree: go to"));
    t.keys(s, "Escape");
    await idle("the tree closed", (x) => !x.includes("Session tree: go to"));
    // /reload reads keybindings.json again, as pi's does.
    writeFileSync(join(agentDir, "keybindings.json"), JSON.stringify({ "app.session.tree": "alt+r" }));
    t.type(s, "/reload");
    await idle("the reload", (x) => x.includes("Reloaded keybindings, extensions"));
    t.keys(s, "M-r");
    await t.until(s, "Alt+R: the tree", (x) => x.includes("Session tree: go to"));
    t.keys(s, "Escape");
    await idle("the tree closed again", (x) => !x.includes("Session tree: go to"));

    // While a reply is on its way: Alt+Enter queues a follow-up, Alt+Up brings it back, Esc aborts.
    t.type(s, "slow one");
    await t.until(s, "the run", (x) => x.includes("steer>"));
    t.write(s, "later please");
    t.keys(s, "M-Enter");
    await t.until(s, "the queued follow-up", (x) => x.includes("⏳ 1 queued · follow-up: later please"));
    t.keys(s, "M-Up");
    await t.until(
      s,
      "the follow-up back in the editor",
      (x) => x.includes("Restored 1 queued message to editor") && x.includes("steer> later please"),
    );
    t.keys(s, "Escape");
    await idle("the aborted run", (x) => x.includes("prompt> later please"));

    // Ctrl+Z: the shell's job control; fg brings pi back as it was.
    t.keys(s, "C-z");
    await t.until(s, "the shell", (x) => /Stopped/.test(x) && x.includes("shell$"));
    t.type(s, "fg");
    await idle("pi again", (x) => x.includes("prompt> later please") && x.includes("counted to twelve"));
    t.keys(s, "C-u");
    t.keys(s, "C-d");
    await t.until(s, "the shell after pi", (x) => /shell\$ \s*$/.test(x.trimEnd() + " "));
  }, 120_000);

  it.skipIf(!pi16Installed)(
    "pi 1.6.0 does the same: a key from keybindings.json, Tab paths, Ctrl+G",
    async () => {
      const s = "upstream";
      t.open(s, { cols: 120, rows: 40, cwd: join(dir.path, "project") }, `${NODE22} ${PI16_CLI}`);
      await t.until(s, "pi 1.6.0", (x) => x.includes("v1.6.0") && x.includes("claude"));
      t.keys(s, "M-t");
      await t.until(s, "Alt+T: the tree", (x) => x.includes("Session Tree"));
      t.keys(s, "Escape");
      await t.until(s, "the tree closed", (x) => !x.includes("Session Tree"));
      t.write(s, "cat sr");
      t.keys(s, "Tab");
      await t.until(s, "the folder", (x) => /^cat src\/\s*$/m.test(x));
      t.keys(s, "Tab");
      await t.until(s, "the file", (x) => /^cat src\/main\.ts\s*$/m.test(x));
      t.keys(s, "C-u");
      t.write(s, "draft");
      t.keys(s, "C-g");
      await t.until(s, "the external editor", (x) => x.includes("EDITOR HAS"));
      t.keys(s, "Enter");
      await t.until(s, "the edited prompt", (x) => /^draft and more from the editor\s*$/m.test(x));
    },
    60_000,
  );
});
