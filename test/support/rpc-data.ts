/**
 * The `data` of a worker's successful response, for tests that read it; a refusal
 * throws with the worker's own error so the test fails saying why.
 */
import type { RpcResponse } from "../../shared/schema/rpc.js";

/** `response.data` as `T` when `success`, else throws the worker's error. */
export function rpcData<T>(response: RpcResponse): T {
  if (!response.success) throw new Error(`the worker refused ${response.command}: ${response.error}`);
  return response.data as T;
}
