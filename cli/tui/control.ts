/**
 * What the TUI asks of the agents it shows. The socket client satisfies it; the
 * single-agent mode implements it over an in-process runtime; tests pass a fake.
 */
import type { IpcParams } from "../../shared/schema/ipc.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import type { RpcAnswer, RpcCommand } from "../../shared/schema/rpc.js";

/** Commands the TUI sends. Each rejects with a readable error when it could not be done. */
export interface AgentControl {
  /**
   * Send one pi protocol command (`prompt`, `steer`, `follow_up`, `abort`,
   * `extension_ui_response`); the answer's data typed by the command and checked (readRpcAnswer).
   */
  rpc<C extends RpcCommand>(agent: string, command: C): Promise<RpcAnswer<C["type"]>>;
  stop(agent: string): Promise<AgentInfo>;
  restart(agent: string): Promise<AgentInfo>;
  spawn(params: IpcParams<"spawn">): Promise<AgentInfo>;
}
