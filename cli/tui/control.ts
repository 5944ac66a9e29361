/**
 * What the TUI asks of the agents it shows. The socket client satisfies it; the
 * single-agent mode implements it over an in-process runtime; tests pass a fake.
 */
import type { IpcParams } from "../../shared/schema/ipc.js";
import type { RpcCommandEnvelope, RpcResponse } from "../../shared/schema/rpc.js";

/** Commands the TUI sends. Each rejects with a readable error when it could not be done. */
export interface AgentControl {
  /** Forward one pi protocol command (`prompt`, `steer`, `follow_up`, `abort`, `extension_ui_response`). */
  rpc(agent: string, command: RpcCommandEnvelope): Promise<RpcResponse>;
  stop(agent: string): Promise<unknown>;
  restart(agent: string): Promise<unknown>;
  spawn(params: IpcParams<"spawn">): Promise<unknown>;
}
