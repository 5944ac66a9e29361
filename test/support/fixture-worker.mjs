#!/usr/bin/env node
/**
 * A minimal worker speaking the pi RPC protocol, for supervisor tests that must not
 * depend on the real agent. It answers `get_state`, `prompt` (a short scripted run
 * ending in `agent_end`), `abort`, and acknowledges other commands.
 *
 * Knobs (environment):
 *   FIXTURE_CRASH_AT_START=1   exit at once with FIXTURE_EXIT_CODE (default 1)
 *   FIXTURE_EXIT_CODE=N        exit code used by the crash knobs
 *   FIXTURE_EXIT_AFTER_MS=N    exit with FIXTURE_EXIT_CODE N ms after starting
 *   FIXTURE_HANG=1             read stdin but never answer
 *   FIXTURE_GARBAGE=1          print non-protocol lines on stdout at start
 *   FIXTURE_GARBAGE_FLOOD=N    a prompt "flood" answers, then prints N non-JSON lines as fast as stdout takes them
 *                              (no run events) and then a `{"type":"flood_done","lines":N}` event;
 *                              N=0: until it is killed
 *   FIXTURE_STARTUP_MS=N       wait N ms before reading commands
 *   FIXTURE_EVENTS=N           message_update events per run (default 3)
 *   FIXTURE_EVENT_DELAY_MS=N   delay between run events (default 0)
 *   FIXTURE_RUN_BASH="CMD"     a prompt starts `bash -c CMD` as a tool and stays busy until it ends or `abort`
 *   FIXTURE_SILENT_RUN=1       a prompt starts a run that emits nothing after agent_start until `abort`
 *   FIXTURE_PID_FILE=PATH      append "worker <pid>" and "child <pid>" lines
 *   FIXTURE_SESSION_DIR=DIR    where new session files go (default: $PI_ORCH_HOME, which the
 *                              supervisor sets to its own home, else the OS temp dir)
 *   FIXTURE_LEAVE_CHILDREN=1   neither abort nor stdin close kill tool children (like pi 0.73)
 *   FIXTURE_IGNORE_STDIN_CLOSE=1  keep running after stdin closes (tests SIGTERM escalation)
 *   FIXTURE_IGNORE_SIGTERM=1   ignore SIGTERM (tests SIGKILL escalation)
 *   FIXTURE_USAGE_TOKENS=N     totalTokens reported by each assistant message (default 10)
 *   FIXTURE_PARTIAL_LINES=1    write every stdout line in pieces of 1-7 bytes, each in its own tick
 *   FIXTURE_BIG_LINE_MB=N      every run starts with one stdout line of N MB (a JSON object, no LF inside)
 *   FIXTURE_NOISE_RUN=1        every run mixes non-protocol lines into its events (bytes, `null`, `[1]`,
 *                              a torn object, a response nobody asked for)
 *   FIXTURE_GET_STATE_EVENTS=1 after each `get_state` answer, a `{"type":"fixture_get_state","at":MS}`
 *                              event (`at`: this process's monotonic clock), so a test sees the pings
 * Arguments: `--session FILE` resumes that session file.
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = process.env;
const exitCode = Number(env.FIXTURE_EXIT_CODE ?? 1);
const pidFile = env.FIXTURE_PID_FILE;
const note = (line) => pidFile && appendFileSync(pidFile, `${line}\n`);
note(`worker ${process.pid}`);

if (env.FIXTURE_CRASH_AT_START === "1") {
  process.stderr.write("fixture: crashing at start\n");
  process.exit(exitCode);
}
if (env.FIXTURE_EXIT_AFTER_MS) setTimeout(() => process.exit(exitCode), Number(env.FIXTURE_EXIT_AFTER_MS));
if (env.FIXTURE_IGNORE_SIGTERM === "1") process.on("SIGTERM", () => {});

const argv = process.argv.slice(2);
const sessionArg = argv.indexOf("--session");
const resumed = sessionArg !== -1 ? argv[sessionArg + 1] : null;
const sessionFile =
  resumed ??
  join(env.FIXTURE_SESSION_DIR ?? env.PI_ORCH_HOME ?? tmpdir(), `fixture-${process.pid}-${Date.now()}.jsonl`);
if (!existsSync(sessionFile))
  appendFileSync(sessionFile, `${JSON.stringify({ type: "session", id: String(process.pid) })}\n`);

let stdoutTail = Promise.resolve();
/** Write raw stdout text; with FIXTURE_PARTIAL_LINES the text goes out in small pieces over several ticks. */
const writeOut = (text) => {
  if (env.FIXTURE_PARTIAL_LINES !== "1") return void process.stdout.write(text);
  stdoutTail = stdoutTail.then(async () => {
    for (let i = 0; i < text.length; ) {
      const n = 1 + Math.floor(Math.random() * 7);
      process.stdout.write(text.slice(i, i + n));
      i += n;
      await new Promise((r) => setImmediate(r));
    }
  });
};
const send = (obj) => writeOut(`${JSON.stringify(obj)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = new Set();
let run = null; // { aborted, child?, done: Promise }

if (env.FIXTURE_GARBAGE === "1") {
  process.stdout.write("this is not json\n");
  process.stdout.write("null\n");
}

function messageCount() {
  return readFileSync(sessionFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"message"')).length;
}

function state() {
  return {
    model: null,
    thinkingLevel: "off",
    isStreaming: run !== null,
    isCompacting: false,
    steeringMode: "one-at-a-time",
    followUpMode: "one-at-a-time",
    sessionFile,
    sessionId: String(process.pid),
    autoCompactionEnabled: false,
    messageCount: messageCount(),
    pendingMessageCount: 0,
    argv,
    resumed,
  };
}

async function startRun(message) {
  const delay = Number(env.FIXTURE_EVENT_DELAY_MS ?? 0);
  const tokens = Number(env.FIXTURE_USAGE_TOKENS ?? 10);
  const user = { role: "user", content: [{ type: "text", text: message }], timestamp: Date.now() };
  appendFileSync(sessionFile, `${JSON.stringify({ type: "message", message: user })}\n`);
  const current = { aborted: false, child: null, wake: null };
  run = current;
  if (env.FIXTURE_BIG_LINE_MB)
    writeOut(
      `${JSON.stringify({ type: "big_event", data: "x".repeat(Number(env.FIXTURE_BIG_LINE_MB) * 1024 * 1024) })}\n`,
    );
  if (env.FIXTURE_NOISE_RUN === "1") {
    writeOut("\u0001\u00ff binary noise \ufffd\n");
    writeOut('null\n[1]\n{"type":"message_update","torn\n');
    writeOut(`${JSON.stringify({ type: "response", id: "orch-rpc-999999", command: "get_state", success: true })}\n`);
  }
  send({ type: "agent_start" });
  send({ type: "turn_start" });
  if (env.FIXTURE_SILENT_RUN === "1") {
    await new Promise((r) => (current.wake = r));
  } else {
    send({ type: "message_start", message: user });
    send({ type: "message_end", message: user });
    if (env.FIXTURE_RUN_BASH) {
      const child = spawn("bash", ["-c", env.FIXTURE_RUN_BASH], { stdio: "ignore" });
      children.add(child);
      current.child = child;
      note(`child ${child.pid}`);
      send({
        type: "tool_execution_start",
        toolCallId: "call_1",
        toolName: "bash",
        args: { command: env.FIXTURE_RUN_BASH },
      });
      await new Promise((r) => {
        child.on("exit", r);
        current.wake = r;
      });
      children.delete(child);
      send({
        type: "tool_execution_end",
        toolCallId: "call_1",
        toolName: "bash",
        result: { content: [] },
        isError: current.aborted,
      });
    }
    const n = Number(env.FIXTURE_EVENTS ?? 3);
    let text = "";
    for (let i = 0; i < n && !current.aborted; i++) {
      if (delay > 0) await sleep(delay);
      text += `word${i} `;
      const partial = { role: "assistant", content: [{ type: "text", text }] };
      send({
        type: "message_update",
        message: partial,
        assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: `word${i} `, partial },
      });
    }
  }
  const assistant = {
    role: "assistant",
    content: [{ type: "text", text: current.aborted ? "" : "done" }],
    usage: {
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: tokens,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: current.aborted ? "aborted" : "stop",
    timestamp: Date.now(),
  };
  appendFileSync(sessionFile, `${JSON.stringify({ type: "message", message: assistant })}\n`);
  send({ type: "message_end", message: assistant });
  send({ type: "turn_end", message: assistant, toolResults: [] });
  send({ type: "agent_end", messages: [user, assistant] });
  run = null;
}

/** Non-JSON lines as fast as the pipe takes them, 1,000 to a write; `n` = 0 never ends. */
async function flood(n) {
  const lines = (from, count) =>
    Array.from({ length: count }, (_, i) => `garbage line ${from + i} %%% not json\n`).join("");
  for (let sent = 0; n === 0 || sent < n; ) {
    const count = n === 0 ? 1000 : Math.min(1000, n - sent);
    if (!process.stdout.write(lines(sent, count))) await new Promise((r) => process.stdout.once("drain", r));
    sent += count;
  }
  send({ type: "flood_done", lines: n });
}

async function handle(line) {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (err) {
    return send({
      type: "response",
      command: "parse",
      success: false,
      error: `Failed to parse command: ${err.message}`,
    });
  }
  if (typeof cmd !== "object" || cmd === null) {
    return send({ type: "response", command: "parse", success: false, error: "command must be an object" });
  }
  const id = cmd.id;
  const ok = (data) =>
    send({
      ...(id !== undefined ? { id } : {}),
      type: "response",
      command: cmd.type,
      success: true,
      ...(data !== undefined ? { data } : {}),
    });
  const fail = (error) =>
    send({ ...(id !== undefined ? { id } : {}), type: "response", command: cmd.type, success: false, error });
  switch (cmd.type) {
    case "get_state":
      ok(state());
      if (env.FIXTURE_GET_STATE_EVENTS === "1") send({ type: "fixture_get_state", at: performance.now() });
      return;
    case "prompt":
      if (typeof cmd.message !== "string") return fail("prompt needs a string message");
      if (run && !cmd.streamingBehavior) return fail("Agent is already processing; use streamingBehavior");
      ok();
      if (env.FIXTURE_GARBAGE_FLOOD && cmd.message === "flood") return void flood(Number(env.FIXTURE_GARBAGE_FLOOD));
      if (!run) void startRun(cmd.message);
      return;
    case "abort": {
      const current = run;
      if (!current) return ok();
      current.aborted = true;
      if (env.FIXTURE_LEAVE_CHILDREN !== "1") current.child?.kill("SIGKILL");
      current.wake?.();
      while (run === current) await sleep(5);
      return ok();
    }
    case "get_messages":
      return ok({ messages: [] });
    default:
      if (typeof cmd.type === "string") return ok();
      return fail(`Unknown command: ${cmd.type}`);
  }
}

async function main() {
  if (env.FIXTURE_STARTUP_MS) await sleep(Number(env.FIXTURE_STARTUP_MS));
  let buffer = "";
  process.stdin.on("data", (chunk) => {
    buffer += chunk.toString("utf8");
    let nl;
    while ((nl = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (env.FIXTURE_HANG === "1" || line === "") continue;
      void handle(line);
    }
  });
  process.stdin.on("end", () => {
    if (env.FIXTURE_IGNORE_STDIN_CLOSE === "1") {
      setInterval(() => {}, 1 << 30);
      return;
    }
    if (env.FIXTURE_LEAVE_CHILDREN !== "1") for (const child of children) child.kill("SIGKILL");
    process.exit(0);
  });
}

void main();
