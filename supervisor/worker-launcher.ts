/**
 * One session for all of a supervisor's workers (Linux). The kernel shares a busy CPU
 * between scheduler autogroups first, and every session is an autogroup: a worker spawned
 * `detached` (node's only way to give it a process group of its own) is one more group
 * weighing against the supervisor's, so a few hundred busy workers outweigh the supervisor
 * and the TUI at any nice (BENCHMARKS.md, "Supervisor"). The launcher is a small perl
 * process started once in a session of its own; it forks every worker in that session,
 * each in a process group of its own (`setpgrp`, which node cannot call without `setsid`),
 * so all workers weigh as one autogroup, at the workers' nice, however many they are.
 *
 * The worker's stdio are pipes the launcher makes; the supervisor opens its own ends
 * through `/proc/LAUNCHER/fd/N` and then tells the launcher to close its copies, so the
 * worker's stdin is the supervisor's alone (its EOF still ends the worker when the
 * supervisor dies). The launcher reaps the workers and says how each ended. It has no
 * controlling terminal and is in no terminal's process group, so neither are the workers.
 *
 * Why perl: as for the command reaper (worker/tools/reaper.ts), it is on every Debian-like
 * system and can fork and `setpgrp`. Where there is no perl, no /proc or no autogroups,
 * workers are spawned detached as before.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, constants as fsConstants, openSync, readFileSync } from "node:fs";
import { Socket } from "node:net";
import { constants } from "node:os";
import { delimiter, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { readAutogroupNice, setAutogroupNice } from "../shared/autogroup.js";
import { readLines } from "../shared/jsonl.js";
import { groupAlive, signalGroup } from "./teardown.js";

/** `PI_ORCH_WORKER_SESSIONS=each` spawns every worker in a session of its own, as before the launcher. */
export const WORKER_SESSIONS_VAR = "PI_ORCH_WORKER_SESSIONS";

/**
 * The launcher, run as `perl -e LAUNCHER`. It says `ready`, then reads requests on stdin: a decimal length, a newline and that many bytes of
 * NUL-separated fields. `spawn ID FILE CWD FD3 ARGC ARGS... ENV...` answers
 * `started ID PID FD...` (its ends of the worker's stdin, stdout, stderr and fd 3) or
 * `failed ID ERRNO`; `opened ID` closes those ends. A worker's end is `exit PID CODE` or
 * `signal PID N`. It exits when its stdin closes.
 */
const LAUNCHER = String.raw`
use strict;
use POSIX ();
use Fcntl qw(F_SETFD);
$0 = "pi-orch-workers";
$SIG{PIPE} = "IGNORE";
binmode STDIN;
binmode STDOUT;
sub tell_supervisor { syswrite(STDOUT, "$_[0]\n") }
my (%ends, %workers);
$SIG{CHLD} = sub { };
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    next unless delete $workers{$pid};
    tell_supervisor($? & 127 ? "signal $pid " . ($? & 127) : "exit $pid " . ($? >> 8));
  }
}
sub move_fd {
  my ($fh, $to) = @_;
  if (fileno($fh) == $to) { fcntl($fh, F_SETFD, 0) } else { POSIX::dup2(fileno($fh), $to) }
}
sub start {
  my ($id, $file, $cwd, $fd3, $argc, @rest) = @_;
  my @args = splice(@rest, 0, $argc);
  my (@mine, @theirs);
  for my $n (0 .. ($fd3 ? 3 : 2)) {
    pipe(my $r, my $w) or return tell_supervisor("failed $id " . ($! + 0));
    if ($n == 0 || $n == 3) { push @theirs, $r; push @mine, $w } else { push @theirs, $w; push @mine, $r }
  }
  pipe(my $status_r, my $status_w) or return tell_supervisor("failed $id " . ($! + 0));
  my $pid = fork();
  return tell_supervisor("failed $id " . ($! + 0)) unless defined $pid;
  if ($pid == 0) {
    $SIG{$_} = "DEFAULT" for qw(PIPE CHLD);
    setpgrp(0, 0);
    if (fileno($status_w) <= 3) { open(my $copy, ">&", $status_w) or POSIX::_exit(127); $status_w = $copy }
    move_fd($theirs[$_], $_) for 0 .. $#theirs;
    my %env = map { /\A([^=]*)=(.*)\z/s ? ($1, $2) : () } @rest;
    if (chdir $cwd) { %ENV = %env; exec { $file } $file, @args }
    syswrite($status_w, $! + 0);
    POSIX::_exit(127);
  }
  close $_ for @theirs, $status_w;
  my $errno = "";
  while (1) {
    my $n = sysread($status_r, $errno, 16, length $errno);
    last if defined $n ? $n == 0 : !$!{EINTR};
  }
  if ($errno ne "") {
    waitpid($pid, 0);
    return tell_supervisor("failed $id $errno");
  }
  $workers{$pid} = 1;
  $ends{$id} = \@mine;
  tell_supervisor("started $id $pid " . join(" ", map { fileno $_ } @mine));
}
tell_supervisor("ready");
my $buf = "";
while (1) {
  reap();
  my $rin = "";
  vec($rin, 0, 1) = 1;
  # A SIGCHLD between reap() and select() waits for the next wake-up: the timeout bounds it.
  my $n = select(my $rout = $rin, undef, undef, %workers ? 0.5 : undef);
  next if $n <= 0;
  my $got = sysread(STDIN, $buf, 65536, length $buf);
  if (!defined $got) { next if $!{EINTR} || $!{EAGAIN}; last }
  last if $got == 0;
  while ($buf =~ /\A(\d+)\n/) {
    my ($len, $head) = ($1, length($1) + 1);
    last if length($buf) < $head + $len;
    my ($kind, @fields) = split /\0/, substr($buf, $head, $len), -1;
    substr($buf, 0, $head + $len, "");
    if ($kind eq "spawn") { start(@fields) }
    elsif ($kind eq "opened") { close $_ for @{ delete $ends{ $fields[0] } || [] } }
  }
}
`;

/** Whether the launcher can run here, and if not, why. */
export type LauncherSupport = { ok: true; perl: string } | { ok: false; reason: string };

/**
 * Whether workers can share one session here: Linux with autogroups on (without them a
 * session weighs nothing of its own, so there is nothing to gain), perl on PATH, and not
 * turned off with `PI_ORCH_WORKER_SESSIONS=each`.
 */
export function launcherSupport(env: NodeJS.ProcessEnv = process.env): LauncherSupport {
  if (env[WORKER_SESSIONS_VAR] === "each") return { ok: false, reason: `${WORKER_SESSIONS_VAR}=each` };
  if (process.platform !== "linux") return { ok: false, reason: `no scheduler autogroups on ${process.platform}` };
  let enabled = "";
  try {
    enabled = readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim();
  } catch {
    // a kernel without CONFIG_SCHED_AUTOGROUP
  }
  if (enabled !== "1" || readAutogroupNice("self") === null)
    return { ok: false, reason: "the kernel's scheduler autogroups are off" };
  const perl = (env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, "perl"))
    .find((p) => existsSync(p));
  if (!perl) return { ok: false, reason: "perl is not installed" };
  return { ok: true, perl };
}

/** What to start, as node's spawn takes it. */
export interface LaunchRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The worker's whole environment (entries set to undefined are left out). */
  env: NodeJS.ProcessEnv;
  /** Give the worker a fourth pipe on fd 3 (its keys). */
  fd3: boolean;
}

/** The supervisor's ends of a launched worker's pipes. */
export interface LaunchedStdio {
  /** Null when the worker had already exited by the time it was opened. */
  stdin: Writable | null;
  stdout: Readable;
  stderr: Readable;
  fd3: Writable | null;
}

/** What the launcher tells of one worker. Called in this order: `started` or `failed`, then `exited`. */
export interface LaunchCallbacks {
  started(pid: number, stdio: LaunchedStdio): void;
  /** Not started: `message` as node's spawn would say it, or null when the launcher cannot serve it (spawn it directly). */
  failed(message: string | null): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

/** Whether node would refuse the request (a NUL byte): it is left to node's spawn, which says so. */
function refusedByNode(req: LaunchRequest): boolean {
  const values = [req.file, req.cwd, ...req.args, ...Object.entries(req.env).flat()];
  return values.some((v) => typeof v === "string" && v.includes("\0"));
}

/** The request's bytes for the launcher. */
export function encodeSpawn(id: number, req: LaunchRequest): string {
  const env = Object.entries(req.env)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  const payload = [
    "spawn",
    String(id),
    req.file,
    req.cwd,
    req.fd3 ? "1" : "0",
    String(req.args.length),
    ...req.args,
    ...env,
  ].join("\0");
  return `${Buffer.byteLength(payload)}\n${payload}`;
}

/** One line the launcher says. */
export type LauncherLine =
  | { kind: "ready" }
  | { kind: "started"; id: number; pid: number; fds: number[] }
  | { kind: "failed"; id: number; errno: number }
  | { kind: "exit"; pid: number; code: number }
  | { kind: "signal"; pid: number; signal: NodeJS.Signals | null };

/** Parse one line of the launcher, or null for anything else. */
export function parseLauncherLine(line: string): LauncherLine | null {
  const [kind, ...rest] = line.trim().split(" ");
  const n = rest.map(Number);
  if (n.some((x) => !Number.isInteger(x))) return null;
  switch (kind) {
    case "ready":
      return n.length === 0 ? { kind } : null;
    case "started":
      return n.length >= 5 ? { kind, id: n[0]!, pid: n[1]!, fds: n.slice(2) } : null;
    case "failed":
      return n.length === 2 ? { kind, id: n[0]!, errno: n[1]! } : null;
    case "exit":
      return n.length === 2 ? { kind, pid: n[0]!, code: n[1]! } : null;
    case "signal": {
      if (n.length !== 2) return null;
      const name = Object.entries(constants.signals).find(([, number]) => number === n[1])?.[0];
      return { kind, pid: n[0]!, signal: (name as NodeJS.Signals | undefined) ?? null };
    }
    default:
      return null;
  }
}

/** node's words for a failed spawn: `spawn FILE ENOENT`. */
function spawnErrorText(file: string, errno: number): string {
  const name = Object.entries(constants.errno).find(([, number]) => number === errno)?.[0];
  return `spawn ${file} ${name ?? `errno ${errno}`}`;
}

/**
 * A supervisor's launcher: started at the first launch, ended by `close()`. Where it cannot
 * start or serve (it exits before it is ready, the pipes cannot be opened) every launch
 * after that fails with null, so the caller spawns directly.
 */
export class WorkerLauncher {
  private proc: ChildProcess | null = null;
  private ready = false;
  private unusable = false;
  private closed = false;
  private nextId = 1;
  /** Requests written before the launcher said it is ready, in order. */
  private readonly backlog: string[] = [];
  /** Requests sent, not yet answered, by id. */
  private readonly asked = new Map<number, { req: LaunchRequest; cb: LaunchCallbacks }>();
  /** Running workers by pid. */
  private readonly running = new Map<number, LaunchCallbacks>();
  private exited: Promise<void> = Promise.resolve();
  /** Workers started and not yet settled (answered their first get_state, or exited). */
  private readonly starting = new Set<number>();
  /** The session's autogroup nice as last set (a new session starts at 0). */
  private groupNice = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly perl: string,
    private readonly nice: number,
    private readonly warn: (message: string) => void,
  ) {}

  /** Whether launches may go through it (it may still fail one with null). */
  get usable(): boolean {
    return !this.unusable && !this.closed;
  }

  /** The launcher's pid while it runs. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** The worker `pid` has started (answered, or exited): the session may go back to the workers' nice. */
  settled(pid: number): void {
    if (this.starting.delete(pid)) this.applyNice();
  }

  /**
   * Give the session the nice it should have now: the supervisor's weight (0) while a worker
   * is starting, so a busy machine does not make a start miss its deadline, else the workers'
   * nice. The kernel lets a user change an autogroup's nice only once per 100 ms machine-wide
   * (EAGAIN): a change refused is tried again.
   */
  private applyNice(): void {
    const pid = this.proc?.pid;
    if (!this.ready || pid === undefined || this.retry) return;
    const wanted = this.starting.size > 0 ? 0 : this.nice;
    if (wanted === this.groupNice) return;
    if (setAutogroupNice(pid, wanted)) this.groupNice = wanted;
    else {
      this.retry = setTimeout(() => {
        this.retry = null;
        this.applyNice();
      }, 100);
      this.retry.unref();
    }
  }

  /** Start `req` in the workers' session; `cb` hears how it went. */
  launch(req: LaunchRequest, cb: LaunchCallbacks): void {
    if (!this.usable || refusedByNode(req)) return cb.failed(null);
    const proc = this.proc ?? this.start();
    if (!proc) return cb.failed(null);
    const id = this.nextId++;
    this.asked.set(id, { req, cb });
    const record = encodeSpawn(id, req);
    if (this.ready) proc.stdin!.write(record);
    else this.backlog.push(record);
  }

  /** End the launcher (its stdin closes); resolves once it exited. Workers it still runs are ended. */
  close(): Promise<void> {
    this.closed = true;
    const proc = this.proc;
    if (!proc) return Promise.resolve();
    proc.stdin!.end();
    const timer = setTimeout(() => proc.kill("SIGKILL"), 2000);
    return this.exited.finally(() => clearTimeout(timer));
  }

  private start(): ChildProcess | null {
    let proc: ChildProcess;
    try {
      proc = spawn(this.perl, ["-e", LAUNCHER], {
        cwd: "/",
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (err) {
      this.giveUp(`could not start it: ${(err as Error).message}`);
      return null;
    }
    this.proc = proc;
    this.ready = false;
    this.groupNice = 0;
    this.exited = new Promise<void>((resolve) => proc.once("close", () => resolve()));
    proc.once("error", (err) => {
      if (proc.pid === undefined) this.onExit(proc, `could not start it: ${err.message}`);
    });
    proc.once("exit", (code, signal) => this.onExit(proc, `it exited (${signal ?? `code ${code}`})`));
    proc.stdin!.on("error", () => undefined);
    let stderr = "";
    proc.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    proc.stderr!.on("end", () => {
      if (stderr.trim()) this.warn(`the workers' launcher said: ${stderr.trim()}`);
    });
    readLines(proc.stdout!, { onLine: (line) => this.onLine(proc, line) });
    // Neither it nor its pipes keep this process alive: the workers' own pipes do.
    proc.unref();
    for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as Socket | null)?.unref();
    return proc;
  }

  private onLine(proc: ChildProcess, text: string): void {
    const line = parseLauncherLine(text);
    if (!line || proc !== this.proc) return;
    switch (line.kind) {
      case "ready": {
        this.ready = true;
        this.applyNice();
        for (const record of this.backlog.splice(0)) proc.stdin!.write(record);
        return;
      }
      case "started": {
        const asked = this.asked.get(line.id);
        if (!asked) return;
        this.asked.delete(line.id);
        let stdio: LaunchedStdio;
        try {
          stdio = this.openEnds(proc.pid!, line.fds, asked.req.fd3);
        } catch (err) {
          // The pipes cannot be taken (a /proc that hides them): this worker goes, and the rest start directly.
          signalGroup(line.pid, "SIGKILL");
          proc.stdin!.write(opened(line.id));
          this.giveUp(`could not open a worker's pipes: ${(err as Error).message}`);
          return asked.cb.failed(null);
        }
        proc.stdin!.write(opened(line.id));
        this.running.set(line.pid, asked.cb);
        this.starting.add(line.pid);
        this.applyNice();
        return asked.cb.started(line.pid, stdio);
      }
      case "failed": {
        const asked = this.asked.get(line.id);
        if (!asked) return;
        this.asked.delete(line.id);
        return asked.cb.failed(spawnErrorText(asked.req.file, line.errno));
      }
      case "exit":
      case "signal": {
        const cb = this.running.get(line.pid);
        if (!cb) return;
        this.running.delete(line.pid);
        this.settled(line.pid);
        return line.kind === "exit" ? cb.exited(line.code, null) : cb.exited(null, line.signal);
      }
    }
  }

  /** Open the supervisor's own ends of a worker's pipes, which the launcher holds as `fds`. */
  private openEnds(launcherPid: number, fds: number[], fd3: boolean): LaunchedStdio {
    const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fsConstants;
    const path = (fd: number) => `/proc/${launcherPid}/fd/${fd}`;
    // A write end with no reader left (the worker exited already) is refused with ENXIO: nothing to write to.
    const writer = (fd: number): Writable | null => {
      try {
        return new Socket({ fd: openSync(path(fd), O_WRONLY | O_NONBLOCK), readable: false, writable: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENXIO") return null;
        throw err;
      }
    };
    const reader = (fd: number): Readable =>
      new Socket({ fd: openSync(path(fd), O_RDONLY | O_NONBLOCK), readable: true, writable: false });
    return {
      stdin: writer(fds[0]!),
      stdout: reader(fds[1]!),
      stderr: reader(fds[2]!),
      fd3: fd3 && fds[3] !== undefined ? writer(fds[3]) : null,
    };
  }

  private onExit(proc: ChildProcess, why: string): void {
    if (proc !== this.proc) return;
    const wasReady = this.ready;
    this.proc = null;
    this.ready = false;
    this.backlog.length = 0;
    // Not started yet: nothing of theirs runs (a child forked but not told of lost its pipes' other ends).
    const asked = [...this.asked.values()];
    this.asked.clear();
    // Started: nobody will reap them for us now, nor say how they ended. They are ended, and
    // said to be killed once their groups are empty.
    const running = [...this.running];
    this.running.clear();
    this.starting.clear();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    for (const [pid, cb] of running) {
      signalGroup(pid, "SIGKILL");
      void whenGroupGone(pid).then(() => cb.exited(null, "SIGKILL"));
    }
    if (!this.closed) {
      if (!wasReady) this.giveUp(why);
      else if (running.length > 0)
        this.warn(`the workers' launcher ended (${why}); its ${running.length} worker(s) were killed`);
    }
    for (const { cb } of asked) cb.failed(null);
  }

  private giveUp(why: string): void {
    if (this.unusable) return;
    this.unusable = true;
    this.warn(`workers are spawned in a session each: the workers' launcher cannot be used (${why})`);
  }
}

function opened(id: number): string {
  const payload = `opened\0${id}`;
  return `${payload.length}\n${payload}`;
}

/** A group of processes that are not our children has no exit event: poll until it is empty. */
async function whenGroupGone(pgid: number): Promise<void> {
  while (groupAlive(pgid)) await new Promise((r) => setTimeout(r, 20));
}
