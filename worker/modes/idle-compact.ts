/**
 * One memory-reducing garbage collection, the first time an RPC worker has been quiet
 * for a moment after it started. Start-up leaves both halves of V8's young generation
 * touched (~2 MB resident holding ~0.3 MB of objects) and old-space pages part-filled
 * with what compiling and loading left behind; V8's own memory reducer gives that back
 * only ~8 s after start, and late or not at all while many workers start at once.
 * V8 runs such a collection (the young generation shrunk, the old one compacted, free
 * pages unmapped) when the inspector is asked for `HeapProfiler.collectGarbage`: an
 * in-process session needs no V8 flag, and any flag would make V8 reject the code cache.
 * Once only: later, a worker that grew while it worked is V8's memory reducer's job.
 */

/** What the RPC loop tells the scheduler, and how it stops it. */
export interface IdleCompaction {
  /** A command came in or a line went out: the worker is not idle. */
  activity(): void;
  /** The worker shuts down: no collection any more. */
  stop(): void;
}

/** How the scheduler reads the time and runs the collection (tests pass their own). */
export interface IdleCompactionDeps {
  now: () => number;
  collect: () => Promise<void>;
}

/**
 * Run `collect` once, as soon as `idleMs` have passed with no `activity()` and nothing
 * `busy()` (a command being handled). The timer does not keep the process alive, and
 * a busy worker only pushes the collection back: it never sits on a command's answer.
 */
export function compactWhenIdle(
  idleMs: number,
  busy: () => boolean,
  deps: IdleCompactionDeps = { now: Date.now, collect: collectAllAvailableGarbage },
): IdleCompaction {
  let last = deps.now();
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number): void => {
    timer = setTimeout(check, ms);
    timer.unref();
  };
  const check = (): void => {
    const quiet = deps.now() - last;
    if (quiet < idleMs) return arm(idleMs - quiet);
    if (busy()) return arm(idleMs);
    timer = undefined;
    // A failure costs only the memory it would have given back.
    deps.collect().catch(() => undefined);
  };
  arm(idleMs);
  return {
    activity: () => {
      last = deps.now();
    },
    stop: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * V8's most thorough collection (what it runs on a low-memory notification), asked for
 * through an in-process inspector session. Rejects when this node was built without
 * the inspector (the scheduler then lets it be).
 */
export async function collectAllAvailableGarbage(): Promise<void> {
  const { Session } = await import("node:inspector");
  const session = new Session();
  session.connect();
  try {
    await new Promise<void>((resolve, reject) =>
      session.post("HeapProfiler.collectGarbage", (err) => (err ? reject(err) : resolve())),
    );
  } finally {
    // After the answer's callback, not in it: a session disconnected there kept the process alive.
    session.disconnect();
  }
}
