/** The messages between the pi worker and its codemode thread (worker/codemode/sandbox-thread.ts). */

/** What the thread starts with (its `workerData`). */
export interface ThreadStart {
  code: string;
  /** `{ name, jsName, description }[]` as JSON. */
  toolsJson: string;
  /** The names of the host globals (`searchTools`, ...) as JSON. */
  globalsJson: string;
  /** The store, key → JSON text, as JSON. */
  storeJson: string;
  timeoutMs?: number;
  memoryLimitBytes: number;
}

/** The thread's messages: a call to run, output, the end of the script, or a failure of the sandbox itself. */
export type FromThread =
  | { type: "call"; kind: "call" | "global"; id: number; name: string; args?: string }
  | { type: "output"; kind: "text" | "console" | "image"; data: string; mimeType?: string }
  | { type: "done"; ok: boolean; payload?: string; writes?: string }
  | { type: "crash"; message: string };

/** The answer to a call: its value as JSON, or the error text. */
export interface ToThread {
  id: number;
  ok: boolean;
  payload?: string;
}
