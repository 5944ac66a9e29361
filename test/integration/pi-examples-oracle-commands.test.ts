/**
 * pi's example extensions that no other oracle test runs, with upstream pi 1.6.0 as the
 * oracle: commands, dialogs, system-prompt handlers, status lines and tools, each driven
 * by one RPC script on our worker and on upstream `pi --mode rpc` (same mock model server),
 * and the two transcripts (see test/support/oracle-transcript.ts) compared whole.
 * Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf, type OracleSide, type Transcript } from "../support/oracle-transcript.js";
import { EXAMPLE_DIFFERENCES } from "../differential/deliberate.js";
import { UPSTREAM, type Implementation, type OracleStart } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

/** The oracle: pi 1.6.0, whose examples both sides load. */
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;
const { servers, dirs } = useOracleFixture();

/** The script's transcript on each side, both sides at once, each on its own mock model server. */
function both(
  start: OracleStart,
  script: (s: OracleSide) => Promise<void>,
  drop?: (l: Line) => boolean,
): Promise<Record<Implementation, Transcript>> {
  return transcriptsOf(servers, dirs, { pi: PI, ...start }, script, drop);
}

/** EXAMPLE_DIFFERENCES.themeColours: a transcript with the theme's ANSI escapes taken out. */
function unstyled(t: Transcript): Transcript {
  void EXAMPLE_DIFFERENCES.themeColours;
  return JSON.parse(JSON.stringify(t).replace(/\\u001b\[[0-9;]*m/g, "")) as Transcript;
}

/** A prompt that runs a command whose handler starts a run: its response, then the run's end. */
async function commandRun(s: OracleSide, message: string): Promise<Line> {
  const from = s.w.received.length;
  expect(await s.command(message)).toMatchObject({ success: true });
  return s.w.event("agent_end", 30_000, from);
}

/** models.json (the side's own, as startOracle wrote it) with a second mock model, for the examples that switch models. */
function twoModels(home: string): void {
  const json = JSON.parse(readFileSync(join(home, "models.json"), "utf8")) as Line;
  json.providers.mock.models.push({
    id: "mock-2",
    name: "Mock 2",
    contextWindow: 64_000,
    maxTokens: 2048,
    reasoning: true,
  });
  writeFileSync(join(home, "models.json"), JSON.stringify(json));
}

/** The session file's entries reduced to what the examples write. */
function entriesOf(file: string): unknown[] {
  return (
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line)
      // pi 1.6 also keeps its system prompt as a message entry (the session-context issue's part).
      .filter((e) => e.type !== "session" && e.message?.role !== "system")
      .map((e) => ({
        type: e.type,
        ...(e.customType ? { customType: e.customType, data: e.data } : {}),
        ...(e.message ? { role: e.message.role, customType: e.message.customType } : {}),
      }))
  );
}

describe.skipIf(!installed)(
  "pi's command and dialog examples: our worker and upstream pi give the same transcript",
  () => {
    it("hello and with-deps: the tools' results (a dependency from the example's own node_modules, a thrown error)", async () => {
      const t = await both({ examples: ["hello", "with-deps/"] }, async (s) => {
        await s.run(
          "greet",
          { toolCalls: [{ id: "c1", name: "hello", arguments: { name: "Ada" } }] },
          { text: "greeted" },
        );
        await s.run(
          "durations",
          {
            toolCalls: [
              { id: "c2", name: "parse_duration", arguments: { duration: "2 days" } },
              { id: "c3", name: "parse_duration", arguments: { duration: "soon" } },
            ],
          },
          { text: "parsed" },
        );
      });
      expect(t.ours.lines).toContainEqual(
        expect.objectContaining({ type: "tool_execution_end", toolName: "parse_duration", isError: true }),
      );
      expect(t.ours).toEqual(t.upstream);
    });

    it("commands: /commands lists the commands in a select, and the chosen one's path after a confirm", async () => {
      const t = await both({ examples: ["commands", "pirate", "send-user-message"] }, async (s) => {
        const listing = s.command("/commands");
        const select = await s.answer("select", { value: "/pirate - Toggle pirate mode (agent speaks like a pirate)" });
        s.note(select.options);
        await s.answer("confirm", { confirmed: true });
        await listing;
        await s.command("/commands prompt");
        const cancelled = s.command("/commands extension");
        await s.answer("select", { cancelled: true });
        await cancelled;
      });
      expect(t.ours.notes[0]).toContain("--- Extensions ---");
      expect(t.ours).toEqual(t.upstream);
    });

    it("pirate and claude-rules: what they append to the system prompt reaches the model, and /pirate turns it off", async () => {
      const t = await both(
        {
          examples: ["pirate", "claude-rules"],
          prepareProject: (project) => {
            mkdirSync(join(project, ".claude/rules/frontend"), { recursive: true });
            writeFileSync(join(project, ".claude/rules/testing.md"), "# Testing\n");
            writeFileSync(join(project, ".claude/rules/frontend/react.md"), "# React\n");
          },
        },
        async (s) => {
          await s.command("/pirate");
          await s.run("hello", { text: "Arrr" });
          await s.command("/pirate");
          await s.run("hello again", { text: "Hello" });
        },
      );
      expect(t.ours.requests[0]!.system).toContain("- .claude/rules/frontend/react.md");
      expect(t.ours.requests[0]!.system).toContain("PIRATE MODE");
      expect(t.ours.requests[1]!.system).not.toContain("PIRATE MODE");
      expect(t.ours).toEqual(t.upstream);
    });

    it("inline-bash: !{cmd} in a prompt is replaced by its output before the model sees it, a failure's stderr too", async () => {
      const t = await both({ examples: ["inline-bash"] }, async (s) => {
        await s.run("In !{basename $PWD | cut -c1-9} with !{echo oops >&2; exit 3} and !{printf '%s' done}", {
          text: "seen",
        });
        await s.run("!{nothing here", { text: "plain" });
      });
      expect(t.ours.requests[0]!.messages).toEqual([
        { role: "user", content: [{ type: "text", text: "In pi-oracle with oops and done" }] },
      ]);
      expect(t.ours).toEqual(t.upstream);
    });

    it("send-user-message: /ask, /askwith and /steer when idle start runs with the user's message; empty arguments say how", async () => {
      const t = await both({ examples: ["send-user-message"] }, async (s) => {
        s.server.enqueue({ text: "four" }, { text: "concise" }, { text: "steered" }, { text: "not a command" });
        await commandRun(s, "/ask What is 2+2?");
        await commandRun(s, "/askwith hello");
        await commandRun(s, "/steer Focus on tests");
        // A message an extension sends is a prompt, not a command: /askwith does not run again.
        await commandRun(s, "/ask /askwith nested");
        await s.command("/ask");
        await s.command("/followup   ");
      });
      expect(t.ours.requests.map((r) => r.messages.at(-1))).toEqual([
        { role: "user", content: [{ type: "text", text: "What is 2+2?" }] },
        { role: "user", content: [{ type: "text", text: "User request: hello\nPlease respond concisely." }] },
        { role: "user", content: [{ type: "text", text: "Focus on tests" }] },
        { role: "user", content: [{ type: "text", text: "/askwith nested" }] },
      ]);
      expect(t.ours).toEqual(t.upstream);
    });

    it("message-renderer: /status sends custom messages the session keeps and the model reads", async () => {
      const t = await both({ examples: ["message-renderer"], sessions: true }, async (s) => {
        await s.command("/status warn Disk almost full");
        await s.command("/status all good");
        await s.run("what is the status?", { text: "fine" });
        s.note(entriesOf((await s.send({ type: "get_state" })).data.sessionFile));
      });
      expect(t.ours).toEqual(t.upstream);
    });

    it("timed-confirm: the dialogs carry their timeout, and the answers (confirmed, chosen, cancelled) reach the handler", async () => {
      const t = await both({ examples: ["timed-confirm"] }, async (s) => {
        const timed = s.command("/timed");
        await s.answer("confirm", { confirmed: true });
        await timed;
        const select = s.command("/timed-select");
        await s.answer("select", { value: "Option B" });
        await select;
        const signal = s.command("/timed-signal");
        await s.answer("confirm", { cancelled: true });
        await signal;
      });
      expect(t.ours).toEqual(t.upstream);
    });

    it("confirm-destructive: new_session and fork ask first; a no cancels them, a yes goes ahead", async () => {
      const t = await both({ examples: ["confirm-destructive"], sessions: true }, async (s) => {
        await s.run("first", { text: "one" });
        let pending = s.send({ type: "new_session" }, true);
        await s.answer("confirm", { confirmed: false });
        await pending;
        const forks = (await s.send({ type: "get_fork_messages" })).data.messages as Line[];
        pending = s.send({ type: "fork", entryId: forks[0]!.entryId }, true);
        s.alias(forks[0]!.entryId.slice(0, 8), "<entry>");
        await s.answer("select", { value: "No, stay in current session" });
        await pending;
        pending = s.send({ type: "new_session" }, true);
        await s.answer("confirm", { confirmed: true });
        await pending;
        s.note((await s.send({ type: "get_state" })).data.messageCount);
      });
      expect(t.ours.notes).toEqual([0]);
      expect(t.ours.lines).toContainEqual(
        expect.objectContaining({ method: "select", title: "Fork from entry <entry>?" }),
      );
      expect(t.ours).toEqual(t.upstream);
    });

    it("dirty-repo-guard: a new session in a repository with uncommitted files asks, and goes ahead only on yes", async () => {
      const t = await both(
        {
          examples: ["dirty-repo-guard"],
          sessions: true,
          prepareProject: (project) => {
            const git = (...args: string[]) =>
              execFileSync("git", ["-C", project, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
            git("init", "-q");
            git("commit", "-q", "--allow-empty", "-m", "start");
            writeFileSync(join(project, "a.txt"), "dirty\n");
            writeFileSync(join(project, "b.txt"), "dirty\n");
          },
        },
        async (s) => {
          let pending = s.send({ type: "new_session" }, true);
          await s.answer("select", { value: "No, let me commit first" });
          await pending;
          pending = s.send({ type: "new_session" }, true);
          await s.answer("select", { value: "Yes, proceed anyway" });
          await pending;
        },
      );
      expect(t.ours).toEqual(t.upstream);
    });

    it("preset: --preset applies a preset from presets.json (model, thinking, tools, instructions); /preset switches, the turn records it", async () => {
      const presets = {
        fast: {
          provider: "mock",
          model: "mock-2",
          thinkingLevel: "low",
          tools: ["read", "bash", "nosuch"],
          instructions: "Be fast.",
        },
        careful: {
          provider: "mock",
          model: "mock-1",
          tools: ["read", "grep", "find", "ls"],
          instructions: "Be careful.",
        },
        ghost: { provider: "mock", model: "missing" },
      };
      const t = await both(
        {
          examples: ["preset"],
          sessions: true,
          args: ["--preset", "fast"],
          prepare: (home) => {
            twoModels(home);
            writeFileSync(join(home, "presets.json"), JSON.stringify(presets));
          },
        },
        async (s) => {
          const state = async () => {
            const d = (await s.send({ type: "get_state" })).data;
            s.note({ model: d.model.id, thinking: d.thinkingLevel });
          };
          await state();
          await s.run("go fast", { text: "fast" });
          await s.command("/preset nope");
          await s.command("/preset careful");
          await state();
          await s.run("go careful", { text: "careful" });
          await s.command("/preset ghost");
          await s.command("/preset");
          s.note(entriesOf((await s.send({ type: "get_state" })).data.sessionFile));
        },
      );
      expect(t.ours.requests.map((r) => [r.system, r.tools])).toEqual([
        ["\n\nBe fast.", ["read", "bash"]],
        ["\n\nBe careful.", ["read", "grep", "find", "ls"]],
      ]);
      // EXAMPLE_DIFFERENCES.promptWrittenOnAccept: pi's entries with each turn's preset-state after the prompt, as ours has them.
      void EXAMPLE_DIFFERENCES.promptWrittenOnAccept;
      const entries = t.upstream.notes.at(-1) as Line[];
      for (let i = 0; i + 1 < entries.length; i++) {
        if (entries[i]!.customType === "preset-state" && entries[i + 1]!.role === "user")
          [entries[i], entries[i + 1]] = [entries[i + 1]!, entries[i]!];
      }
      expect(t.ours).toEqual(unstyled(t.upstream));
    });

    it("plan-mode: the plan's steps and the agent_end dialog come before agent_end; staying in plan mode keeps its tools", async () => {
      const t = await both({ examples: ["plan-mode/"], sessions: true }, async (s) => {
        await s.command("/plan");
        const planned = s.run("plan the parser change", {
          text: "Plan:\n1. Read the configuration files\n2. Update the parser module\n",
        });
        await s.answer("select", { value: "Stay in plan mode" });
        await planned;
        await s.command("/todos");
        s.note((await s.send({ type: "get_state" })).data.isStreaming);
      });
      expect(t.ours.lines.slice(-3)).toEqual([
        expect.objectContaining({ method: "select", title: "Plan mode - what next?" }),
        { type: "agent_end" },
        expect.objectContaining({
          method: "notify",
          message: "Plan Progress:\n1. ○ Configuration files\n2. ○ Parser module",
        }),
      ]);
      expect(t.ours).toEqual(unstyled(t.upstream));
    });

    // PENDING on pi 1.6.0: pi 1.6 runs the follow-ups an agent_end handler queues (the todo list, then the execute message) as a new run one at a time; ours appends the first at once (the RPC wire part of issue 24: agent_settled and queued messages).
    it.skip("plan-mode: choosing to execute the plan in the agent_end dialog starts the next run, whose answer ticks the steps off", async () => {
      const t = await both({ examples: ["plan-mode/"], sessions: true }, async (s) => {
        await s.command("/plan");
        const planned = s.run("plan the parser change", {
          text: "Plan:\n1. Read the configuration files\n2. Update the parser module\n",
        });
        s.server.enqueue({ text: "Read them [DONE:1] and updated it [DONE:2]" });
        await s.answer("select", { value: "Execute the plan (track progress)" });
        const end = await planned;
        const second = s.w.received.indexOf(end) + 1;
        await s.w.event("agent_end", 30_000, second);
        await s.command("/todos");
      });
      expect(t.ours.requests).toHaveLength(2);
      expect(t.ours.requests[1]!.messages).toContainEqual({
        role: "user",
        content: [
          { type: "text", text: expect.stringMatching(/^Execute the plan\.[\s\S]*Start with: Configuration files/) },
        ],
      });
      expect(t.ours).toEqual(unstyled(t.upstream));
    });

    it("subagent: the tool runs the agent as a child `pi --mode json -p` of the same implementation and returns its answer", async () => {
      const t = await both(
        {
          examples: ["subagent/index.ts"],
          prepare: (home) => {
            mkdirSync(join(home, "agents"));
            writeFileSync(
              join(home, "agents/helper.md"),
              "---\nname: helper\ndescription: Answers briefly\nmodel: mock-1\ntools: read\n---\nYou answer in one line.\n",
            );
          },
        },
        async (s) => {
          await s.run(
            "ask the helper",
            { toolCalls: [{ id: "c1", name: "subagent", arguments: { agent: "helper", task: "say hi" } }] },
            { text: "child says hi" },
            { text: "the helper said hi" },
          );
        },
      );
      expect(t.ours.requests.map((r) => r.messages.at(-1))).toEqual([
        { role: "user", content: [{ type: "text", text: "ask the helper" }] },
        { role: "user", content: [{ type: "text", text: "Task: say hi" }] },
        { role: "tool", content: "child says hi" },
      ]);
      // The child's messages in the result's details carry how long each took.
      const timeless = (x: unknown) => JSON.parse(JSON.stringify(x).replace(/"durationMs":\d+/g, '"durationMs":0'));
      expect(timeless(t.ours)).toEqual(timeless(t.upstream));
    });

    it("dynamic-tools and structured-output: tools registered at start and by a command reach the model; a terminating tool ends the run", async () => {
      const t = await both({ examples: ["dynamic-tools", "structured-output"] }, async (s) => {
        await s.run(
          "echo",
          { toolCalls: [{ id: "c1", name: "echo_session", arguments: { message: "hi there" } }] },
          { text: "echoed" },
        );
        await s.command("/add-echo-tool shout");
        await s.run(
          "shout",
          { toolCalls: [{ id: "c2", name: "shout", arguments: { message: "hey" } }] },
          { text: "shouted" },
        );
        await s.run("summarize", {
          toolCalls: [
            { id: "c3", name: "structured_output", arguments: { headline: "H", summary: "S", actionItems: ["a"] } },
          ],
        });
      });
      expect(
        t.ours.requests.map((r) => r.tools.filter((n) => !["read", "bash", "edit", "write"].includes(n)).sort()),
      ).toEqual([
        ["echo_session", "structured_output"],
        ["echo_session", "structured_output"],
        ["echo_session", "shout", "structured_output"],
        ["echo_session", "shout", "structured_output"],
        ["echo_session", "shout", "structured_output"],
      ]);
      expect(t.ours).toEqual(t.upstream);
    });

    it("handoff: /handoff refuses outside the TUI (pi 1.6 checks ctx.mode; 0.73 opened the editor over RPC)", async () => {
      const t = await both({ examples: ["handoff"], sessions: true }, async (s) => {
        await s.run("refactor auth", { text: "we refactored auth" });
        const before = (await s.send({ type: "get_state" })).data.sessionFile as string;
        await s.command("/handoff write the tests");
        const state = (await s.send({ type: "get_state" })).data;
        s.note(state.sessionFile === before);
      });
      expect(t.ours.lines).toContainEqual(
        expect.objectContaining({ method: "notify", message: "handoff requires interactive mode" }),
      );
      expect(t.ours.notes).toEqual([true]);
      expect(t.ours).toEqual(t.upstream);
    });

    it("questionnaire and qna: their custom UI is undefined over RPC, as the tool's result and the command's notice show", async () => {
      const t = await both({ examples: ["questionnaire", "qna"] }, async (s) => {
        const question = {
          id: "lang",
          label: "Language",
          prompt: "Which language?",
          options: [{ value: "ts", label: "TypeScript" }],
        };
        await s.run(
          "ask me",
          { toolCalls: [{ id: "c1", name: "questionnaire", arguments: { questions: [question] } }] },
          { text: "asked" },
        );
        await s.command("/qna");
      });
      expect(t.ours.lines).toContainEqual(
        expect.objectContaining({ type: "tool_execution_end", toolName: "questionnaire" }),
      );
      expect(t.ours).toEqual(t.upstream);
    });

    it("auto-commit-on-exit: closing stdin commits the run's changes with the last answer's first line", async () => {
      const t = await both(
        {
          examples: ["auto-commit-on-exit"],
          env: { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
          prepareProject: (project) => {
            execFileSync("git", ["-C", project, "init", "-q"]);
            execFileSync("git", [
              "-C",
              project,
              "-c",
              "user.name=t",
              "-c",
              "user.email=t@t",
              "commit",
              "-q",
              "--allow-empty",
              "-m",
              "start",
            ]);
          },
        },
        async (s) => {
          await s.run(
            "write hello",
            { toolCalls: [{ id: "c1", name: "write", arguments: { path: "hello.txt", content: "hi\n" } }] },
            { text: "Wrote hello.txt\nmore" },
          );
          s.w.closeStdin();
          await s.w.exited;
          const git = (...args: string[]) => execFileSync("git", ["-C", s.project, ...args], { encoding: "utf8" });
          s.note([git("log", "-1", "--format=%s"), git("status", "--porcelain")]);
        },
      );
      expect(t.ours.notes).toEqual([["[pi] Wrote hello.txt\n", ""]]);
      expect(t.ours).toEqual(t.upstream);
    });

    it("model-status: set_model and cycle_model fire model_select, which notifies and sets the status; console.log stays off stdout", async () => {
      const t = await both({ examples: ["model-status"], prepare: twoModels }, async (s) => {
        await s.send({ type: "set_model", provider: "mock", modelId: "mock-2" });
        await s.send({ type: "cycle_model" });
        await s.send({ type: "get_state" });
      });
      expect(t.ours.lines).toContainEqual(expect.objectContaining({ method: "notify", message: "Model: mock/mock-2" }));
      expect(t.ours).toEqual(t.upstream);
    });

    it("status-line, widget-placement, titlebar-spinner, working-indicator: the status, widget and title requests of a run with a tool call", async () => {
      const spinnerFrame = (l: Line) =>
        l.type === "extension_ui_request" && l.method === "setTitle" && /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /.test(l.title);
      const t = await both(
        {
          examples: [
            "status-line",
            "widget-placement",
            "titlebar-spinner",
            "working-indicator",
            "working-message-test",
            "hello",
          ],
        },
        async (s) => {
          await s.run(
            "look",
            { toolCalls: [{ id: "c1", name: "hello", arguments: { name: "Ada" } }] },
            { text: "looked" },
          );
          await s.command("/working-indicator dot");
          await s.command("/working-indicator bogus");
          await s.command("/working-indicator");
        },
        spinnerFrame,
      );
      expect(t.ours).toEqual(unstyled(t.upstream));
    });
  },
);
