import { describe, expect, it } from "vitest";
import { agentOfProcess, type ProcessFacts } from "../../supervisor/agent-process.js";

/** A process table: pid -> [ppid, environ entries, pid namespace]. */
function facts(table: Record<number, [number, string[], string?]>): ProcessFacts {
  return {
    ppid: (pid) => table[pid]?.[0],
    environ: (pid) => table[pid]?.[1].join("\0"),
    pidNamespace: (pid) => (table[pid] ? (table[pid][2] ?? "pid:[1]") : undefined),
  };
}

describe("agentOfProcess", () => {
  const workers = new Map([[100, "fix"]]);
  const table = facts({
    1: [0, []],
    50: [1, ["HOME=/root"]], // the supervisor
    100: [50, ["PI_ORCH_AGENT=fix"]], // its worker
    101: [100, ["PATH=/bin"]], // the worker's bash, environment cleared
    102: [101, []], // a node script it started with env -i
    200: [1, ["PI_ORCH_AGENT=fix", "PATH=/bin"]], // setsid -f: adopted by init, marks kept
    201: [1, ["PI_ORCH_TOOL_TAG=abc.1"]],
    300: [1, ["TERM=xterm"]], // a person's shell
    301: [300, ["TERM=xterm"]], // the person's pi-orch
    400: [1, [], "pid:[9]"], // a process in another PID namespace
    500: [1, []], // the residual: out of the tree with its environment cleared
  });
  it.each([
    [102, 'agent "fix" (pid 102 runs under its worker, pid 100)'],
    [100, 'agent "fix" (pid 100 runs under its worker, pid 100)'],
    [200, 'agent "fix" (pid 200 carries PI_ORCH_AGENT=fix)'],
    [201, "an agent (pid 201 carries PI_ORCH_TOOL_TAG)"],
    [400, "a sandbox (pid 400 is in another PID namespace, pid:[9])"],
  ])("pid %i is %s", (pid, said) => {
    expect(agentOfProcess(pid, workers, table, 50)).toBe(said);
  });

  it.each([301, 50, 500, 999])("pid %i is no agent's", (pid) => {
    expect(agentOfProcess(pid, workers, table, 50)).toBeUndefined();
  });

  it("stops at a cycle in a table read while processes come and go", () => {
    const loop = facts({ 7: [8, []], 8: [7, []] });
    expect(agentOfProcess(7, workers, loop, 7)).toBeUndefined();
  });
});
