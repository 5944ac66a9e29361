/**
 * Fault: a model told to command the fleet from its own bash tool (`pi-orch rpc other
 * get_messages`, `pi-orch stop other`), unboxed. The tool's environment carries no
 * PI_ORCH_HOME, the CLI refuses to run under an agent's PI_ORCH_AGENT mark, and the socket
 * itself refuses every request whose client the kernel places inside an agent: below its
 * worker, or carrying its marks. Probes that clear their environment and speak the socket
 * directly (node, python) are refused too. Figures in FAULTS.md.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { BIN, type Json, World } from "../support/orch-cli.js";
import { figures, until } from "./support.js";

let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

/** The tool results of an agent's runs, from its event log. */
function toolOutputs(events: Json[]): string[] {
  return events
    .filter((e) => e.event?.type === "tool_execution_end")
    .map((e) => JSON.stringify(e.event.result?.content ?? ""));
}

it("an agent's bash can neither find the fleet's home nor list, read or stop another agent", async () => {
  world = new World();
  await world.serve();
  await world.ok(["spawn", "--name", "victim", "--provider", "faux"]);
  await world.ok(["spawn", "--name", "intruder", "--provider", "faux"]);
  const home = world.home.path;
  const attempts = [
    `echo home=\${PI_ORCH_HOME:-none} agent=\${PI_ORCH_AGENT:-none}`,
    `${process.execPath} ${BIN} --home ${home} list`,
    `${process.execPath} ${BIN} --home ${home} rpc victim '{"type":"get_messages"}'`,
    `${process.execPath} ${BIN} --home ${home} stop victim`,
  ];
  for (const command of attempts) await world.ok(["prompt", "intruder", `run \`${command}\``, "--wait"]);
  const outputs = toolOutputs(world.events("intruder"));
  expect(outputs).toHaveLength(4);
  expect(outputs[0]).toContain("home=none agent=intruder");
  for (const out of outputs.slice(1))
    expect(out).toContain('refusing to control agents from inside agent \\"intruder\\"');
  const victim: Json = await world.json(["status", "victim"]);
  expect(victim.status).toBe("idle");
  figures("agent-control", { attempts: attempts.length - 1, answered: 0, victim_status: victim.status });
}, 90_000);

/** Sends every request the fleet has to the socket in argv[2], prints each answer, then `probe-done`. */
const NODE_PROBE = `
const requests = JSON.parse(process.argv[3]);
const socket = require("node:net").connect(process.argv[2]);
let text = "";
const done = () => { process.stdout.write(text + "probe-done\\n"); process.exit(0); };
socket.on("data", (d) => { text += d; if (text.split("\\n").length > requests.length) done(); });
socket.on("close", done);
socket.on("error", (e) => { text += "error " + e.message + "\\n"; done(); });
requests.forEach((r, i) => socket.write(JSON.stringify({ id: i + 1, ...r }) + "\\n"));
setTimeout(done, 10000);
`;

const PYTHON_PROBE = `
import json, socket, sys
requests = json.loads(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
for i, r in enumerate(requests):
    s.sendall((json.dumps(dict(r, id=i + 1)) + "\\n").encode())
text = b""
try:
    while text.count(b"\\n") < len(requests):
        chunk = s.recv(65536)
        if not chunk:
            break
        text += chunk
except OSError as e:
    text += ("error %s\\n" % e).encode()
sys.stdout.write(text.decode() + "probe-done\\n")
`;

/** The text each tool call of an agent printed, from its event log. */
function toolTexts(events: Json[]): string[] {
  return events
    .filter((e) => e.event?.type === "tool_execution_end")
    .map((e) => (e.event.result?.content ?? []).map((c: Json) => c.text ?? "").join(""));
}

/** The requests' answers a probe printed (one JSON object per line). */
function answers(out: string): Json[] {
  return out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json);
}

const hasSs = !spawnSync("ss", ["-V"]).error;

it.skipIf(!hasSs)(
  "the socket refuses an unboxed agent's own programs: env cleared, the socket spoken to directly, out of the tree",
  async () => {
    world = new World();
    const w = world;
    await w.serve();
    await w.ok(["spawn", "--name", "victim", "--provider", "faux", "--sandbox", "off"]);
    await w.ok(["spawn", "--name", "intruder", "--provider", "faux", "--sandbox", "off"]);
    const sock = join(w.home.path, "orch.sock");
    const project = w.cwd.path;
    writeFileSync(join(project, "probe.cjs"), NODE_PROBE);
    writeFileSync(join(project, "probe.py"), PYTHON_PROBE);
    // Every kind of request: list, read a conversation, start an agent, stop one.
    const all = JSON.stringify([
      { type: "list" },
      { type: "status", agent: "victim" },
      { type: "rpc", agent: "victim", command: { type: "get_messages" } },
      { type: "spawn", name: "ghost", provider: "faux" },
      { type: "stop", agent: "victim" },
    ]);
    writeFileSync(join(project, "all.json"), all);
    writeFileSync(join(project, "list.json"), JSON.stringify([{ type: "list" }]));
    const node = process.execPath;
    const python = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], {
      encoding: "utf8",
    }).stdout.trim();
    const ways: Record<string, string> = {
      cli: `env -u PI_ORCH_AGENT ${node} ${BIN} --home ${w.home.path} --no-autostart list 2>&1; echo exit=$?`,
      node_env_cleared: `env -i ${node} probe.cjs ${sock} "$(cat all.json)"`,
      // Left the worker's tree (setsid -f: its parent exits, init adopts it), environment kept.
      node_out_of_tree: `setsid -f sh -c '${node} probe.cjs ${sock} "$(cat all.json)" > out-tree.txt'; echo started`,
    };
    if (python) ways.python_env_cleared = `env -i ${python} probe.py ${sock} "$(cat all.json)"`;
    const said: Record<string, string> = {};
    for (const [way, command] of Object.entries(ways)) {
      const before = toolTexts(w.events("intruder")).length;
      await w.ok(["prompt", "intruder", `run \`${command}\``, "--wait"]);
      said[way] = toolTexts(w.events("intruder"))[before] ?? "";
    }
    const tree = await until(
      () => existsSync(join(project, "out-tree.txt")) && readFileSync(join(project, "out-tree.txt"), "utf8"),
      15_000,
      "the out-of-tree probe's answers",
    );
    said.node_out_of_tree = tree;
    expect(said.cli).toContain("refusing a request from inside agent");
    expect(said.cli).toContain("exit=1");
    let requests = 1;
    let answered = 0;
    for (const way of Object.keys(ways).filter((w) => w !== "cli")) {
      const got = answers(said[way]!);
      expect(got, `${way}: ${said[way]}`).toHaveLength(5);
      requests += got.length;
      answered += got.filter((a) => a.ok === true).length;
      for (const a of got) {
        expect(a.error?.code, `${way}: ${JSON.stringify(a)}`).toBe("agent_refused");
        expect(a.error?.message).toMatch(/refusing a request from inside (agent "intruder"|an agent)/);
      }
    }
    expect(answered).toBe(0);
    const victim: Json = await w.json(["status", "victim"]);
    expect(victim.status).toBe("idle");
    const names = (await w.json<Json[]>(["list"])).map((a) => a.name);
    expect(names).not.toContain("ghost");
    // Leaving the tree and clearing the environment at once: the command's reaper (a child
    // subreaper) adopts it, so it is still below the worker (before the reaper: init
    // adopted it and its `list` was answered, 1 of 1).
    await w.ok([
      "prompt",
      "intruder",
      `run \`env -i setsid -f sh -c '${node} probe.cjs ${sock} "$(cat list.json)" > out-gone.txt'; echo started\``,
      "--wait",
    ]);
    const gone = await until(
      () => existsSync(join(project, "out-gone.txt")) && readFileSync(join(project, "out-gone.txt"), "utf8"),
      15_000,
      "the cleared, out-of-tree probe's answer",
    );
    figures("agent-control-socket", {
      ways: Object.keys(ways).length,
      requests,
      answered,
      victim_status: victim.status,
      ghost_spawned: 0,
      cleared_and_out_of_tree_list_answered: answers(gone).filter((a) => a.ok === true).length,
    });
    expect(answers(gone).map((a) => a.error?.code)).toEqual(["agent_refused"]);
  },
  120_000,
);
