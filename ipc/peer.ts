/**
 * Which processes sit at the other end of a connection to the supervisor's socket
 * (Linux). Node has no SO_PEERCRED, so the kernel is asked in two steps: the peer's socket
 * inode from the socket diagnostics (`ss -x`, netlink UNIX_DIAG_PEER), then the processes
 * holding that inode from `/proc/PID/fd`. Both tables are the kernel's: a client cannot
 * name itself, so it cannot claim to be another process. Connections accepted together
 * share one `ss` run and one scan of `/proc`.
 */
import { execFile } from "node:child_process";
import { readlinkSync } from "node:fs";
import type { Socket } from "node:net";
import { socketHolders } from "../shared/socket-owner.js";

/** What is known of a connection's other end. */
export type PeerLookup =
  /** The pids holding the peer socket (more than one after a fork). */
  | { kind: "found"; pids: number[] }
  /** The client closed, or its process is gone, before it could be looked at. */
  | { kind: "gone" }
  /** This machine cannot tell (not Linux, no `ss`): the reason, for a warning. */
  | { kind: "unknown"; reason: string };

/**
 * From `ss -xnH` output, the peer inode of each of `local` (inodes of accepted sockets).
 * A line's last field is its peer's inode; a socket's own inode stands before the peer's
 * address. Client sockets may be bound to any path (spaces, digits, a newline), so a pair
 * counts only when both of its lines say so: `B`'s line names `A` last and `A`'s line
 * names `B` last. An inode with no such pair, or with two, is left out (refused), not
 * guessed. Pure.
 */
export function peerInodes(ssOutput: string, local: ReadonlySet<string>): Map<string, string> {
  // Each line's fields that may be its own inode, indexed both ways.
  const byField = new Map<string, string[]>(); // field -> peers of the lines holding it
  const byPeer = new Map<string, Set<string>[]>(); // peer -> fields of the lines naming it
  for (const line of ssOutput.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8 || !fields[0]!.startsWith("u_")) continue;
    const peer = fields.at(-1)!;
    const own = new Set(fields.slice(4, -2));
    for (const field of own) {
      const peers = byField.get(field);
      if (peers) peers.push(peer);
      else byField.set(field, [peer]);
    }
    const named = byPeer.get(peer);
    if (named) named.push(own);
    else byPeer.set(peer, [own]);
  }
  const found = new Map<string, string>();
  for (const inode of local) {
    const peers = new Set(
      (byField.get(inode) ?? []).filter((p) => p !== inode && byPeer.get(inode)?.some((own) => own.has(p))),
    );
    if (peers.size === 1) found.set(inode, [...peers][0]!);
  }
  return found;
}

/** The inode of the socket behind `socket`'s file descriptor, or undefined where `/proc/self/fd` does not say. */
function socketInode(socket: Socket): string | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) return undefined;
  try {
    return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
  } catch {
    return undefined;
  }
}

function runSs(): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    execFile("ss", ["-xnH"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 10_000 }, (err, stdout) => {
      if (!err) return resolve({ ok: true, text: stdout });
      const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
      resolve({
        ok: false,
        reason: missing
          ? "ss (iproute2) is not installed; install it (Debian/Ubuntu: apt install iproute2)"
          : `ss -x failed: ${err.message}`,
      });
    });
  });
}

interface Waiting {
  inode: string;
  resolve(lookup: PeerLookup): void;
}

/** A lookup of connections' peers; concurrent lookups share one `ss` run. */
export class PeerFinder {
  private queue: Waiting[] = [];
  private running = false;

  /** The processes at the other end of `socket`, an accepted connection. */
  lookup(socket: Socket): Promise<PeerLookup> {
    const inode = socketInode(socket);
    if (inode === undefined && (socket.destroyed || socket.readableEnded)) return Promise.resolve({ kind: "gone" });
    if (inode === undefined)
      return Promise.resolve({ kind: "unknown", reason: "/proc/self/fd does not name the connection's socket" });
    return new Promise((resolve) => {
      this.queue.push({ inode, resolve });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        const ss = await runSs();
        if (!ss.ok) {
          for (const w of batch) w.resolve({ kind: "unknown", reason: ss.reason });
          continue;
        }
        const peers = peerInodes(ss.text, new Set(batch.map((w) => w.inode)));
        const held = socketHolders(new Set(peers.values()));
        for (const w of batch) {
          const peer = peers.get(w.inode);
          const pids = peer === undefined ? undefined : held.get(peer);
          w.resolve(pids?.length ? { kind: "found", pids } : { kind: "gone" });
        }
      }
    } finally {
      this.running = false;
    }
  }
}
