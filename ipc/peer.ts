/**
 * Which processes sit at the other end of a connection to the supervisor's socket
 * (Linux), and as which users. First from the kernel's record of the connecting process
 * (SO_PEERCRED, read by a short perl: ipc/peer-cred.ts), checked to be that process
 * still. Where perl is missing, in two steps from the kernel's tables: the peer's socket
 * inode from the socket diagnostics (`ss -xp`, netlink UNIX_DIAG_PEER), then the
 * processes holding that inode. `ss -p` names them (it reads every process's fds in its
 * own process, not on the supervisor's thread, which a thousand workers' fds would block
 * for a third of a second per connection), and each one it names is checked in
 * `/proc/PID/fd` before it counts: a process name is the process's own words and cannot
 * be trusted, the fd table can. Both ways are the kernel's: a client cannot name itself,
 * so it cannot claim to be another process. Connections accepted together share one run.
 */
import { execFile } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import type { Socket } from "node:net";
import { socketHolders } from "../shared/socket-owner.js";
import { bootTicksNow, connectorStillThere, processStart, readPeerCreds } from "./peer-cred.js";

/** What is known of a connection's other end. */
export type PeerLookup =
  /**
   * The connecting process (from SO_PEERCRED), or the pids holding the peer socket (from
   * `ss`: more than one after a fork); `uids` are their effective users.
   */
  | { kind: "found"; pids: number[]; uids: number[] }
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

/** `ss -xpnH` output with each line's process list (` users:((...))`, from its first occurrence) cut off. Pure. */
export function withoutUsers(ssOutput: string): string {
  return ssOutput.replace(/ users:\(\(.*$/gm, "");
}

/**
 * From `ss -xpnH` output, the `pid=N,fd=M` pairs on lines that name one of `inodes` as a
 * field before their process list: who ss says holds each inode. Only candidates: a
 * process name can say anything, so each is checked against `/proc` (`holdsSocket`).
 * A line whose text is odd only adds candidates, never hides the ones ss printed. Pure.
 */
export function claimedHolders(
  ssOutput: string,
  inodes: ReadonlySet<string>,
): Map<string, { pid: number; fd: number }[]> {
  const out = new Map<string, { pid: number; fd: number }[]>();
  for (const line of ssOutput.split("\n")) {
    const at = line.indexOf(" users:((");
    if (at < 0) continue;
    const fields = line.slice(0, at).trim().split(/\s+/);
    // The last field before the process list is the peer's inode, not this socket's.
    for (const field of fields.slice(0, -1)) {
      if (!inodes.has(field)) continue;
      const claims = out.get(field) ?? [];
      for (const m of line.slice(at).matchAll(/pid=(\d+),fd=(\d+)/g))
        claims.push({ pid: Number(m[1]), fd: Number(m[2]) });
      out.set(field, claims);
    }
  }
  return out;
}

/** Whether `/proc/PID/fd/FD` is the socket `inode` (false when gone or not readable). */
function holdsSocket(pid: number, fd: number, inode: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
  } catch {
    return false;
  }
}

/** A process's effective uid (`/proc/PID/status`), or undefined when it is gone. */
function processUid(pid: number): number | undefined {
  try {
    const m = /^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The descriptor behind `socket`, or undefined once it is closed. */
function socketFd(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

/** The inode of the socket behind `socket`'s file descriptor, or undefined where `/proc/self/fd` does not say. */
function socketInode(socket: Socket): string | undefined {
  const fd = socketFd(socket);
  if (fd === undefined) return undefined;
  try {
    return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
  } catch {
    return undefined;
  }
}

function runSs(): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    execFile("ss", ["-xpnH"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 10_000 }, (err, stdout) => {
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
  socket: Socket;
  /** Clock ticks since boot when the lookup was asked for (just after the accept). */
  acceptedTicks: number | undefined;
  /** `ss` runs that found no peer for it so far. */
  misses: number;
  resolve(lookup: PeerLookup): void;
}

/**
 * `ss` runs a connection still open here may miss its peer in: the kernel's socket dump
 * comes in parts, and sockets made and closed meanwhile (a fleet's pipes while it starts)
 * can shift an entry out of it. A client really gone has closed its end by then.
 */
const PEER_MISSES = 3;
const MISS_RETRY_MS = 20;

/** Options of a `PeerFinder`. */
export interface PeerFinderOptions {
  /** The perl that reads SO_PEERCRED (default `perl` on PATH); a missing one means the `ss` way. */
  perl?: string;
}

/** A lookup of connections' peers; concurrent lookups share one helper run. */
export class PeerFinder {
  private queue: Waiting[] = [];
  private running = false;
  private readonly perl: string;
  /** Cleared once perl turned out missing: every later lookup takes the `ss` way. */
  private credsWork = true;

  constructor(opts: PeerFinderOptions = {}) {
    this.perl = opts.perl ?? "perl";
  }

  /** The processes at the other end of `socket`, an accepted connection. */
  lookup(socket: Socket): Promise<PeerLookup> {
    const acceptedTicks = bootTicksNow();
    const inode = socketInode(socket);
    if (inode === undefined && (socket.destroyed || socket.readableEnded)) return Promise.resolve({ kind: "gone" });
    if (inode === undefined)
      return Promise.resolve({ kind: "unknown", reason: "/proc/self/fd does not name the connection's socket" });
    return new Promise((resolve) => {
      this.queue.push({ inode, socket, acceptedTicks, misses: 0, resolve });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        const rest = this.credsWork ? await this.byCreds(batch) : batch;
        if (rest.length > 0) await this.bySs(rest);
      }
    } finally {
      this.running = false;
    }
  }

  /** Judge what the kernel's SO_PEERCRED can; returns the lookups left to the `ss` way. */
  private async byCreds(batch: Waiting[]): Promise<Waiting[]> {
    // Descriptors are read now, in the same turn as the fork: none can close and be
    // reused for another connection before the helper has inherited it.
    const asked: { w: Waiting; fd: number }[] = [];
    for (const w of batch) {
      const fd = w.socket.destroyed ? undefined : socketFd(w.socket);
      if (fd === undefined || w.acceptedTicks === undefined) w.resolve({ kind: "gone" });
      else asked.push({ w, fd });
    }
    if (asked.length === 0) return [];
    const read = await readPeerCreds(
      asked.map((a) => a.fd),
      this.perl,
    );
    if (!read.ok) {
      if (read.missing) this.credsWork = false;
      return asked.map((a) => a.w);
    }
    const rest: Waiting[] = [];
    asked.forEach(({ w }, i) => {
      const cred = read.creds[i];
      // No answer for a socket still open here: let the socket tables tell.
      if (cred === null || cred === undefined)
        return void (w.socket.destroyed ? w.resolve({ kind: "gone" }) : rest.push(w));
      // pid 0: a process of a PID namespace this one cannot see.
      const there = cred.pid > 0 && connectorStillThere(processStart(cred.pid), w.acceptedTicks!);
      w.resolve(there ? { kind: "found", pids: [cred.pid], uids: [cred.uid] } : { kind: "gone" });
    });
    return rest;
  }

  /** Judge `batch` from `ss -xp` (and, for what it does not name, every process's fds). */
  private async bySs(batch: Waiting[]): Promise<void> {
    const ss = await runSs();
    if (!ss.ok) {
      for (const w of batch) w.resolve({ kind: "unknown", reason: ss.reason });
      return;
    }
    const peers = peerInodes(withoutUsers(ss.text), new Set(batch.map((w) => w.inode)));
    const claimed = claimedHolders(ss.text, new Set(peers.values()));
    const holders = new Map<string, number[]>();
    for (const [peer, claims] of claimed) {
      const pids = [...new Set(claims.filter((c) => holdsSocket(c.pid, c.fd, peer)).map((c) => c.pid))];
      if (pids.length > 0) holders.set(peer, pids);
    }
    // Where ss named nobody who checks out (an ss without -p, say): every process's fds, here.
    const unnamed = new Set([...peers.values()].filter((p) => !holders.has(p)));
    if (unnamed.size > 0) for (const [peer, pids] of socketHolders(unnamed)) holders.set(peer, pids);
    const again: Waiting[] = [];
    for (const w of batch) {
      const peer = peers.get(w.inode);
      if (peer === undefined && ++w.misses < PEER_MISSES && !w.socket.destroyed && !w.socket.readableEnded) {
        again.push(w);
        continue;
      }
      const pids = peer === undefined ? undefined : holders.get(peer);
      const uids = (pids ?? []).map(processUid);
      if (!pids?.length || uids.some((u) => u === undefined)) w.resolve({ kind: "gone" });
      else w.resolve({ kind: "found", pids, uids: [...new Set(uids as number[])] });
    }
    if (again.length > 0) {
      await new Promise((r) => setTimeout(r, MISS_RETRY_MS));
      // Back through the whole drain: the retry takes the same way as any other lookup.
      this.queue.push(...again);
    }
  }
}
