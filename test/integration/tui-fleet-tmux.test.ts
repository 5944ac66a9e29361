/**
 * A fleet of four in `pi-orch tui` in a real terminal, run twice: with upstream pi 1.6.0
 * unchanged as the worker (`--worker-command`) and with ours, on the same mock model
 * server. tmux on a private socket holds the TUI; `pipe-pane` keeps the raw bytes the
 * TUI writes (its OSC 7501 program status, which tmux itself does not pass on).
 *
 * - `loop` runs a bash loop printing a line every 250 ms: its lines show in its pane
 *   while the tool still runs (the latency from print to screen is printed as a figure);
 * - `ask` runs `/ask`, whose handler waits on a confirm: its pane, the title, `list` and
 *   the terminal's program status say it waits for you and what it asks; `y` answers;
 * - `cmd` runs `/hello`, which starts no run: `prompt --wait` returns at its answer;
 * - `plain` answers a prompt: `done`, and its cost (from models.json's prices) in `list --json`.
 * Quitting the TUI and `shutdown` leave no process of the test's world.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, it } from "vitest";
import { layoutPanes } from "../../cli/tui/layout.js";
import { formatProgramStatus } from "../../shared/activity.js";
import { startMockModelServer, type MockModelServer, type RecordedRequest } from "../support/mock-model-server.js";
import { BIN, PI, World, type Json } from "../support/orch-cli.js";
import { tempDir } from "../support/rpc-worker.js";
import { HAS_TMUX, paneText, terminalEnv, tuiSession } from "../support/tmux.js";
import { mockModelsJson } from "../support/upstream-oracle.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";

const COLS = 160;
const ROWS = 44;
const NAMES = ["loop", "ask", "cmd", "plain"];
const TICKS = 40;

const EXTENSION = `
export default function (pi) {
  pi.registerCommand("hello", { description: "says hello", handler: async (_args, ctx) => ctx.ui.notify("hello there", "info") });
  pi.registerCommand("ask", {
    description: "asks before it deploys",
    handler: async (_args, ctx) => {
      const ok = await ctx.ui.confirm("Deploy?", "to production");
      ctx.ui.notify(ok ? "deploying" : "not deploying", "info");
    },
  });
}
`;

type Impl = "pi 1.6.0" | "ours";

beforeAll(() => {
  if (!existsSync(BIN) || !existsSync(PI))
    throw new Error("dist/cli/pi-orch.js or dist/cli/pi.js is missing: run npm run build first");
});

/** Everything one run starts, removed at its end (tmux, the world, the server, the folders). */
async function cleanup(run: {
  socket: string;
  world?: World;
  server?: MockModelServer;
  dirs: { cleanup: () => void }[];
}): Promise<void> {
  try {
    if (run.socket) spawnSync("tmux", ["-S", run.socket, "kill-server"]);
    await run.world?.cleanup();
  } finally {
    await run.server?.close();
    for (const d of run.dirs) d.cleanup();
  }
}

/** The model: a bash loop for "run the loop", a closing line after a tool result, a greeting otherwise. */
function reply(loop: string) {
  return (req: RecordedRequest) => {
    const messages = (req.body?.messages ?? []) as { role: string; content: unknown }[];
    const last = messages.at(-1);
    if (last?.role === "tool") return { text: "the loop ended" };
    if (JSON.stringify(last?.content ?? "").includes("run the loop"))
      return { toolCalls: [{ name: "bash", arguments: { command: loop } }] };
    return { text: "hello from the model" };
  };
}

// The two runs at once, each in its own world, tmux server and mock model server: most of a
// run is waiting for its bash loop's 10 s and for the screen.
describe.skipIf(!HAS_TMUX || !pi16Installed)(
  "a fleet of four in the TUI (skipped without tmux or test/upstream)",
  () => {
    it.concurrent.for<Impl>(["pi 1.6.0", "ours"])(
      "with %s as the worker: live tool output, a dialog waiting for you and answered, a handled command at once, cost, no process left",
      { timeout: 120_000 },
      async (impl, { expect, onTestFinished }) => {
        const run: Parameters<typeof cleanup>[0] = { socket: "", dirs: [] };
        onTestFinished(() => cleanup(run));
        const server = await startMockModelServer();
        run.server = server;
        const agentDir = tempDir("pi-fleet-agent-");
        const socketDir = tempDir("pi-fleet-tmux-");
        run.dirs.push(agentDir, socketDir);
        const socket = join(socketDir.path, "tmux.sock");
        run.socket = socket;
        const models = mockModelsJson(server) as { providers: { mock: { models: Json[] } } };
        models.providers.mock.models[0]!.cost = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
        writeFileSync(join(agentDir.path, "models.json"), JSON.stringify(models));
        const w = new World({ PI_CODING_AGENT_DIR: agentDir.path, PI_OFFLINE: "1" });
        run.world = w;
        const tmux = (...args: string[]) =>
          spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { env: terminalEnv(w.env), encoding: "utf8" });
        const screen = () => tmux("capture-pane", "-p", "-t", "tui").stdout ?? "";
        writeFileSync(join(w.home.path, "models.json"), JSON.stringify(models));
        const ext = join(w.cwd.path, "fleet.ts");
        writeFileSync(ext, EXTENSION);
        const times = join(w.cwd.path, "times.txt");
        // The time first, then the line: a tick the TUI shows always has its time in the file.
        const loop = `for i in $(seq 1 ${TICKS}); do date +%s%3N >> ${times}; echo tick-$i; sleep 0.25; done`;
        server.enqueue(...Array.from({ length: 12 }, () => reply(loop)));
        const bin = impl === "pi 1.6.0" ? `${NODE22} ${PI16_CLI}` : `${process.execPath} ${PI}`;
        const command = `${bin} --mode rpc --no-session -e ${ext}`;

        await w.serve();
        for (const name of NAMES)
          await w.ok(["spawn", "--name", name, "--worker-command", command, "--provider", "mock", "--model", "mock-1"]);
        const raw = join(w.cwd.path, "tui-output.bin");
        const started = tmux(
          ...tuiSession({ cols: COLS, rows: ROWS, cwd: w.cwd.path, home: w.home.path, env: ["PI_PROGRAM_STATUS=1"] }),
        );
        expect(started.status, started.stderr).toBe(0);
        expect(tmux("pipe-pane", "-O", "-t", "tui", `cat >> ${raw}`).status).toBe(0);
        const layout = layoutPanes(NAMES.length, COLS, ROWS - 3);
        const pane = (s: string, i: number) => paneText(s, layout.rects[i]!);
        const until = (what: string, test: (s: string) => boolean) => w.until(what, screen, test, 30_000);
        await until("four panes", (s) => pane(s, 3).includes("plain") && s.includes("● connected"));

        // Live output: a tick line shows while the loop still prints.
        await w.ok(["prompt", "loop", "run the loop"]);
        const live = await until("a tick line in loop's pane", (s) => /tick-\d+/.test(pane(s, 0)));
        const seenAt = Date.now();
        const shown = Math.max(...[...pane(live, 0).matchAll(/tick-(\d+)/g)].map((m) => Number(m[1])));
        const printed = readFileSync(times, "utf8").trim().split("\n").map(Number);
        expect(printed.length, "the loop still runs").toBeLessThan(TICKS);
        const latencyMs = seenAt - printed[shown - 1]!;
        console.log(`FIGURE tui-live-tool-output ${impl} | tick=${shown} print_to_screen_ms<=${latencyMs}`);
        // The figure is the measure; this bound only catches output held until the tool ends (13.7 s before).
        expect(latencyMs).toBeLessThan(5_000);

        // A dialog: waiting for you, in the pane, the title, list and the terminal's status.
        // The command's answer comes when its handler ends, after the dialog: it runs beside the test.
        const asked = w.start(["prompt", "ask", "/ask"]);
        const asking = await until(
          "ask waiting for you",
          (s) => pane(s, 1).includes("waiting for you") && pane(s, 1).includes("? Deploy?: to production"),
        );
        expect(asking.split("\n")[0]).toContain("1 waiting for you");
        const listed = await w.json<Json[]>(["list", "--json"]);
        expect(listed.find((a) => a.name === "ask")!.activity).toEqual({
          state: "waiting",
          message: "Deploy?: to production",
        });
        const text = await w.cli(["list"]);
        expect(text.stdout).toContain("ask is waiting for you: Deploy?: to production");
        await w.until(
          "the blocked program status",
          () => (existsSync(raw) ? readFileSync(raw, "latin1") : ""),
          (bytes) => bytes.includes(formatProgramStatus({ state: "blocked", message: "ask: Deploy?: to production" })),
        );
        tmux("send-keys", "-t", "tui", "2");
        await until("the confirm in ask's pane", (s) => pane(s, 1).includes("y yes · n no"));
        tmux("send-keys", "-t", "tui", "y");
        await until("ask answered", (s) => !pane(s, 1).includes("waiting for you"));
        await w.waitForStatus("ask", (a) => a.activity?.state !== "waiting");
        expect(await asked.exited, asked.stderr()).toBe(0);

        // A command that starts no run: --wait returns at its answer.
        const t0 = performance.now();
        const hello = await w.cli(["prompt", "cmd", "/hello", "--wait"]);
        const helloMs = performance.now() - t0;
        expect(hello.code, hello.stderr).toBe(0);
        expect(hello.stderr).toContain("took the prompt without starting a run");
        console.log(`FIGURE tui-handled-command ${impl} | prompt_wait_ms=${Math.round(helloMs)}`);

        // A plain run: done, with its cost.
        const hi = await w.cli(["prompt", "plain", "hi", "--wait"]);
        expect(hi.code, hi.stderr).toBe(0);
        await until("plain done", (s) => pane(s, 3).includes("· done"));
        const after = await w.json<Json[]>(["list", "--json"]);
        const plain = after.find((a) => a.name === "plain")!;
        expect(plain.activity).toEqual({ state: "done" });
        expect(plain.usage.cost).toBeGreaterThan(0);
        await w.waitForStatus("loop", (a) => a.activity?.state === "done", 30_000);

        // Teardown: the TUI quits, the supervisor shuts down, nothing of the world runs.
        tmux("send-keys", "-t", "tui", "q");
        await w.until(
          "the TUI to quit",
          () => String(tmux("has-session", "-t", "tui").status),
          (code) => code !== "0",
        );
        await w.ok(["shutdown"]);
        await w.until(
          "no process of the world",
          () => w.taggedPids().join(" "),
          (pids) => pids === "",
        );
      },
    );
  },
);
