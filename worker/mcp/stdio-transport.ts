/**
 * The stdio transport of an MCP server, for the SDK's `Client`. Not the SDK's own
 * `StdioClientTransport`: that one starts the server in the worker's process group, with
 * a reduced environment, and on close signals only the server process, so a server run
 * through `npx` or `uvx` leaves its real process behind. Here, as pi 1.6.0 does it, the
 * server leads its own process group; the worker's teardown knows that group (and the
 * tool tag its environment carries) like a bash tool's; close ends stdin, then SIGTERMs
 * and finally SIGKILLs the whole tree. Messages are framed by the SDK's own `ReadBuffer`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { killTree, trackChild, untrackChild } from "../tools/process-tree.js";

/** How long a server may take to exit after its stdin closed, then after SIGTERM. */
const CLOSE_GRACE_MS = 1_000;
/** The stderr kept for a diagnostic. */
const STDERR_TAIL_CHARS = 2_000;

/** What the server is started with (the caller resolved `env` and `cwd`). */
export interface StdioServerParams {
  command: string;
  args: string[];
  cwd: string;
  /** The whole environment of the server. */
  env: NodeJS.ProcessEnv;
}

/** One server process behind the SDK's `Transport` interface. */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private stderrText = "";
  private closing: Promise<void> | undefined;

  constructor(private readonly params: StdioServerParams) {}

  /** The last output of the server on stderr (its own account of a failure). */
  get stderrTail(): string {
    return this.stderrText.trim();
  }

  /** The server's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("the MCP stdio transport was already started");
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        cwd: this.params.cwd,
        env: this.params.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32",
        windowsHide: true,
      });
      this.child = child;
      child.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        if (child.pid !== undefined) trackChild(child.pid);
        resolve();
      });
      // Its group may outlive it (what it started): close() still takes that down.
      child.once("close", () => this.onclose?.());
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderrText = (this.stderrText + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error("the MCP server is not running"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** End the server: close its stdin, then SIGTERM its group, then SIGKILL what is left of its tree. */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    const pid = child.pid;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    const within = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    child.stdin?.end();
    if (!(await within(CLOSE_GRACE_MS))) {
      killTree(pid, "SIGTERM");
      if (!(await within(CLOSE_GRACE_MS))) killTree(pid, "SIGKILL");
    }
    // What the server started in its group outlives it unless the group goes too.
    killTree(pid, "SIGKILL");
    untrackChild(pid);
    this.buffer.clear();
  }
}
