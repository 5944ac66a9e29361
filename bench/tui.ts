/**
 * TUI rendering under load: 16 (then 30) faux agents stream at once through a real
 * supervisor while the TUI (in this process: socket client, store, React, ink layout
 * and output to a discarding terminal of 200×50, in colour) shows every pane. Reports
 * the time of one frame (median, p99), frames per second, events per second, this
 * process's CPU share over the streaming window and the machine's other CPU use.
 * `BENCH_TUI_FLEET_ONLY=1 npm run bench -- tui` runs only the 64 agents' row.
 */
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { build } from "esbuild";
import { IpcClient } from "../ipc/client.js";
import { chooseOverview } from "../cli/tui/layout.js";
import { fmtOther, startLoadMeter } from "./load.js";
import { fmt, median, percentile, table } from "./stats.js";
import { PI, ROOT, startServe } from "./support.js";
const PANES = [16, 30];
/** A fleet the grid cannot show on one page of readable panes: the list overview beside the focused pane. */
const FLEET = 64;
const WORDS = 600;
const CHUNK_MS = 8;
const COLS = 200;
const ROWS = 50;

/** A terminal that keeps nothing: ink renders into it as into a real one. */
class NullTerminal extends Writable {
  readonly isTTY = false;
  readonly columns = COLS;
  readonly rows = ROWS;
  writes = 0;
  /** Called with the time of every write (the end of a frame). */
  onWrite: (at: number) => void = () => {};
  override _write(_chunk: unknown, _enc: string, done: () => void): void {
    this.writes++;
    this.onWrite(performance.now());
    done();
  }
}

/** A keyboard nobody types on. */
class IdleKeyboard extends EventEmitter {
  readonly isTTY = true;
  setRawMode() {}
  setEncoding() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read() {
    return null;
  }
}

type TuiModules = typeof import("../cli/tui/App.js") &
  typeof import("../cli/tui/screen.js") &
  typeof import("../cli/tui/store.js") &
  typeof import("../cli/tui/supervisor-link.js") &
  typeof import("../cli/tui/theme.js");

/** The TUI's modules, bundled like `npm run build` does (the bench loader does not compile .tsx). */
async function loadTui(): Promise<TuiModules> {
  const dir = join(ROOT, "node_modules/.cache/pi-orch-bench");
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, "tui-entry.ts");
  const out = join(dir, `tui-${process.pid}.mjs`);
  writeFileSync(
    entry,
    ["App.js", "screen.js", "store.js", "supervisor-link.js", "theme.js"]
      .map((m) => `export * from ${JSON.stringify(join(ROOT, "cli/tui", m))};`)
      .join("\n"),
  );
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    jsx: "automatic",
    packages: "external",
    logLevel: "warning",
  });
  try {
    return (await import(pathToFileURL(out).href)) as TuiModules;
  } finally {
    rmSync(out, { force: true });
    rmSync(entry, { force: true });
  }
}

/**
 * How the panes reach the terminal: ink draws every cell and writes the whole frame, ink
 * draws every cell and writes the lines that changed (its `incrementalRendering`), or the
 * screen paints the panes as rows.
 */
type Writer = "ink" | "ink-incremental" | "screen";

const WRITER_LABEL: Record<Writer, string> = {
  ink: "ink (cells)",
  "ink-incremental": "ink (cells, incremental)",
  screen: "screen (rows)",
};

/** One streaming window with `AGENTS` panes; returns the table row. */
async function measure(tui: TuiModules, AGENTS: number, writer: Writer, zoomed = false): Promise<(string | number)[]> {
  const { App, Screen, ScreenContext, TuiStore, SupervisorLink, makeTheme, ThemeProvider } = tui;
  const { render } = await import("ink");
  const { createElement } = await import("react");

  const serve = await startServe({ NO_COLOR: "1" });
  const { client, home } = serve;
  const cwd = mkdtempSync(join(tmpdir(), "pi-bench-tui-cwd-"));
  const script = join(cwd, "script.json");
  const text = Array.from({ length: WORDS }, (_, i) => (i % 12 === 11 ? "line\n" : `word${i}`)).join(" ");
  writeFileSync(script, JSON.stringify([{ text, chunkDelayMs: CHUNK_MS }]));
  const frames: number[] = [];
  const frameCpu: number[] = [];
  const inkTimes: number[] = [];
  let counting = false;
  let events = 0;
  // A frame starts when the store tells the view of changes and ends when ink has written it.
  let frameStart: number | null = null;
  const store = new TuiStore({ onFrame: (ms) => (frameStart ??= performance.now() - ms) });
  // Events counted as the TUI receives them (a second subscriber would add its own parsing to this process's CPU).
  const ended = new Set<string>();
  let lagged = 0;
  const dispatch = store.dispatch;
  store.dispatch = (action) => {
    if (action.type === "lagged") lagged += action.to - action.from + 1;
    if (action.type === "event") {
      events++;
      if ((action.event as { type?: string }).type === "agent_end") ended.add(action.agent);
    }
    dispatch(action);
  };
  // The first listener (App subscribes when it mounts, after this): the CPU clock at a frame's start.
  let cpuAtStart: NodeJS.CpuUsage | null = null;
  store.subscribe(() => (cpuAtStart ??= process.cpuUsage()));
  const link = new SupervisorLink(store, { connect: () => IpcClient.connect({ home }) });
  const stdout = new NullTerminal();
  stdout.onWrite = (at) => {
    if (frameStart !== null && counting) frames.push(at - frameStart);
    if (cpuAtStart !== null && counting) {
      const used = process.cpuUsage(cpuAtStart);
      frameCpu.push((used.user + used.system) / 1000);
    }
    frameStart = null;
    cpuAtStart = null;
  };
  // As `pi-orch tui` runs it: ink renders into the screen, which writes the changed rows to the terminal.
  const screen = writer === "screen" ? new Screen(stdout) : null;
  const app = render(
    createElement(
      ScreenContext.Provider,
      { value: screen },
      createElement(
        ThemeProvider,
        { value: makeTheme(true) },
        createElement(App, {
          store,
          control: link,
          cols: COLS,
          rows: ROWS,
          ...(zoomed ? { mode: "single" as const } : {}),
          onQuit: () => {},
        }),
      ),
    ),
    // debug: every commit is drawn at once, so a frame's time is React + layout + output.
    // Incremental rendering is not in debug mode: ink's own throttle is lifted instead (the store throttles).
    {
      onRender: ({ renderTime }: { renderTime: number }) => counting && inkTimes.push(renderTime),
      stdout: screen?.inkStdout ?? (stdout as unknown as NodeJS.WriteStream),
      stdin: new IdleKeyboard() as unknown as NodeJS.ReadStream,
      ...(writer === "ink-incremental" ? { debug: false, incrementalRendering: true, maxFps: 1000 } : { debug: true }),
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  try {
    const names = Array.from({ length: AGENTS }, (_, i) => `bench-${String(i + 1).padStart(2, "0")}`);
    const workerCommand = [
      process.execPath,
      PI,
      "--mode",
      "rpc",
      "--provider",
      "faux",
      "--faux-script",
      script,
      "--no-session",
    ];
    // Spawned once the TUI subscribed: what is measured is the streaming, not a start-up race.
    while (store.getState().connection.state !== "connected") await new Promise((r) => setTimeout(r, 20));
    await Promise.all(names.map((name) => client.spawn({ name, cwd, workerCommand, restart: "temporary" })));
    // Every agent_end seen, or (when this subscriber fell behind and lost some) every agent idle again.
    // Every agent_end seen, or (when this subscriber fell behind and lost some) every agent idle
    // again; an agent_end still missing 10 s after all are idle is said on stderr, not waited for.
    const done = (async () => {
      let idleSince: number | null = null;
      for (let i = 0; ; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if (ended.size === AGENTS) return;
        if (i % 10 !== 0 && lagged === 0) continue;
        const idle = (await client.list()).every((a) => a.status === "idle");
        if (idle && lagged > 0) return;
        idleSince = idle ? (idleSince ?? Date.now()) : null;
        if (idleSince !== null && Date.now() - idleSince > 10_000) {
          const missing = names.filter((n) => !ended.has(n));
          const seen = missing.map((n) => `${n}@${store.getState().agents[n]?.lastSeq ?? "none"}`);
          process.stderr.write(
            `bench tui: no agent_end from ${missing.length} agent(s) after all went idle: ${seen.join(" ")}\n`,
          );
          return;
        }
      }
    })();
    const endLoad = startLoadMeter();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    counting = true;
    await Promise.all(names.map((name) => client.rpc(name, { type: "prompt", message: "stream" })));
    await done;
    counting = false;
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const load = endLoad();
    const cpuShare = ((cpu.user + cpu.system) / 1000 / wallMs) * 100;
    const seconds = wallMs / 1000;
    return [
      AGENTS,
      `${WRITER_LABEL[writer]}${zoomed ? ", one zoomed" : chooseOverview(AGENTS, COLS, ROWS - 3, null) === "list" ? ", list overview" : ""}`,
      frames.length,
      fmt(frames.length / seconds),
      `${fmt(median(frames), 2)} (ink ${fmt(median(inkTimes), 2)})`,
      `${fmt(percentile(frames, 99), 2)} (ink ${fmt(percentile(inkTimes, 99), 2)})`,
      `${fmt(median(frameCpu), 2)} / ${fmt(percentile(frameCpu, 99), 2)}`,
      fmt(events / seconds, 0),
      `${fmt(cpuShare)} %`,
      fmtOther(load),
    ];
  } finally {
    app.unmount();
    screen?.dispose();
    await link.close();
    store.dispose();
    await serve.close();
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Run the section. */
export async function run(): Promise<string> {
  process.env.NODE_ENV ??= "production"; // as the CLI runs it: before react loads
  const tui = await loadTui();
  const rows: (string | number)[][] = [];
  // BENCH_TUI_FLEET_ONLY=1: only the fleet's row (a quick before/after of the list overview).
  if (process.env.BENCH_TUI_FLEET_ONLY !== "1") {
    for (const panes of PANES)
      for (const writer of ["ink", "ink-incremental", "screen"] as const) rows.push(await measure(tui, panes, writer));
    rows.push(await measure(tui, PANES[0]!, "screen", true));
  }
  rows.push(await measure(tui, FLEET, "screen"));
  return [
    `## TUI rendering (16, 30 and ${FLEET} agents, every agent streaming)`,
    "",
    `Each faux agent streams ${WORDS} words at ${CHUNK_MS} ms a word through a real supervisor; the TUI draws every pane`,
    `(${COLS}×${ROWS}, in colour) and is throttled to 20 frames/s. Each size runs three times, side by side: panes drawn by`,
    "ink (cells: ink's output stage tokenizes and places every cell, the writer before), the same with ink's own",
    "`incrementalRendering` (ink 6.8 writes only the lines that changed; its throttle lifted, the store throttles) and by the screen (rows: what",
    "`pi-orch tui` uses; React and ink render only when their part changes: footer, inputs, dialogs; the header repaints",
    "its row when an agent's state changes, a pane its finished rows when its agent changes, and only changed rows are written). A frame is from the",
    "store's change notification to the terminal write; in brackets ink's own layout-and-output pass, over the frames ink",
    "drew (with the screen: the fewer frames where ink's part changed). Frame times are wall time, so a",
    "busy machine stretches them while the TUI waits for a CPU; frame CPU is the CPU time the process spent on the frame.",
    "CPU share is this process (the TUI: socket client, store, rendering; events are counted in the store, not by a second",
    "subscriber) over the streaming window, in % of one core;",
    "other CPU is what everything but this benchmark used meanwhile (the machine is shared). The last row: one agent zoomed",
    "to the whole screen (pi's interactive view, its input line open) while all of them stream; then",
    `${FLEET} agents, too many for one page of panes, in the list overview (a row each, the focused agent's pane beside it).`,
    "",
    table(
      [
        "panes",
        "panes drawn by",
        "frames",
        "frames/s",
        "frame median ms (ink)",
        "frame p99 ms (ink)",
        "frame CPU median / p99 ms",
        "events/s received",
        "TUI CPU share",
        "other CPU (cores)",
      ],
      rows,
    ),
    "",
    `Targets at 16 panes: median frame ≤ 10 ms, p99 ≤ 50 ms, TUI CPU ≤ 30 % of a core. At ${FLEET} agents:`,
    "median frame ≤ 2 ms, p99 ≤ 16 ms, TUI CPU ≤ 25 % of a core.",
  ].join("\n");
}
