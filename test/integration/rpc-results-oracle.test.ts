/**
 * Our result schemas (shared/schema/rpc.ts RpcResultSchemas) against pi 1.6.0's own
 * answers: the same reads, before and after a run on the mock model server, sent to the
 * upstream process, each answer's `data` checked against its command's schema. The
 * schemas are what our clients read a worker's answers with (`pi-orch` drives upstream pi
 * as `--worker-command`), so they must hold for pi's answers, not only for ours.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  readRpcAnswer,
  type RpcCommand,
  type RpcCommandType,
  type RpcResponse,
  RpcResultSchemas,
} from "../../shared/schema/rpc.js";
import { checker } from "../../shared/validate.js";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { PI_BIN, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { mockModelsJson } from "../support/upstream-oracle.js";
import { NODE22, PI16_CLI, pi16Installed } from "../support/upstream-pi16.js";

const BIN = { ours: [process.execPath, PI_BIN], "pi 1.6.0": [NODE22, PI16_CLI] } as const;

const { server, dirs } = useOracleFixture();

const READS: RpcCommand[] = [
  { type: "get_state" },
  { type: "get_messages" },
  { type: "get_available_models" },
  { type: "get_available_thinking_levels" },
  { type: "get_session_stats" },
  { type: "get_fork_messages" },
  { type: "get_entries" },
  { type: "get_tree" },
  { type: "get_last_assistant_text" },
  { type: "get_commands" },
];

describe.skipIf(!pi16Installed)("result schemas against pi 1.6.0's answers", () => {
  it.each(["ours", "pi 1.6.0"] as const)(
    "%s: every read answer matches its schema, before and after a run",
    async (impl) => {
      const dir = tempDir("rpc-results-oracle-");
      dirs.push(dir);
      const agentDir = join(dir.path, "agent");
      const cwd = join(dir.path, "project");
      mkdirSync(agentDir, { recursive: true });
      mkdirSync(cwd, { recursive: true });
      writeFileSync(join(agentDir, "models.json"), JSON.stringify(mockModelsJson(server)));
      const w = new RpcWorker(["--mode", "rpc", "--model", "mock/mock-1"], {
        cwd,
        env: {
          PATH: process.env.PATH,
          HOME: dir.path,
          PI_CODING_AGENT_DIR: agentDir,
          PI_ORCH_HOME: undefined,
          PI_OFFLINE: "1",
        },
        bin: [...BIN[impl]],
      });
      const problems: string[] = [];
      const readAll = async (when: string) => {
        for (const command of READS) {
          const answer = await w.request(command as unknown as Record<string, unknown>);
          if (!answer.success) {
            problems.push(`${when} ${command.type}: success false (${JSON.stringify(answer.error)})`);
            continue;
          }
          const checked = checker(RpcResultSchemas[command.type])(answer.data);
          if (!checked.ok) problems.push(`${when} ${command.type}: ${checked.errors.join("; ")}`);
          clientReads(when, command.type, answer);
        }
      };
      /** What the CLI and the TUI read of an answer (IpcClient.rpc) holds too. */
      const clientReads = (when: string, type: RpcCommandType, answer: Record<string, unknown>) => {
        try {
          readRpcAnswer(impl, type, answer as RpcResponse);
        } catch (err) {
          problems.push(`${when} ${type} as a client reads it: ${(err as Error).message}`);
        }
      };
      await readAll("before");
      server.enqueue({ text: "an answer" });
      const from = w.received.length;
      clientReads("run", "prompt", await w.request({ type: "prompt", message: "hello" }));
      await w.waitFor((l) => l.type === "agent_end", 20_000, from);
      await readAll("after");
      w.kill();
      expect(problems).toEqual([]);
    },
    60_000,
  );
});
