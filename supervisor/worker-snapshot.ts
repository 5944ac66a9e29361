/**
 * The supervisor's side of the worker's startup snapshot (shared/startup-snapshot.ts):
 * our own worker starts with `--snapshot-blob FILE` when a blob made for this node and the
 * worker's NODE_OPTIONS is there and checked; else it starts as before (the code cache),
 * and the blob is built in the background, once, for the workers started after it. A
 * blob that is corrupt or for another node is never passed: it is rebuilt once, and a
 * build that fails is said in the log and not tried again by this supervisor.
 * `PI_ORCH_SNAPSHOT=off` starts every worker without one. A worker whose command line names
 * an extension (`-e`, `--extension`) starts from the `extensions` blob, which holds the
 * chunks its first extension would load; every other from the plain one.
 */
import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  buildSnapshot,
  checkSnapshot,
  SNAPSHOT_BUILD_BUSY,
  type SnapshotPlace,
  snapshotBuildRunning,
  snapshotPlace,
} from "../shared/startup-snapshot.js";
import type { SnapshotKind } from "../shared/snapshot-hook.js";

/** How soon a supervisor looks again at a blob that another process is building. */
const BUSY_RETRY_MS = 1000;

/** What the supervisor knows of the blob for one kind and NODE_OPTIONS. */
interface Known {
  place: SnapshotPlace;
  state: "ready" | "building" | "off";
  /** The blob's size and time when it was checked: a blob changed since is checked again. */
  size?: number;
  mtimeMs?: number;
  /** Whether a build was tried already (a second failure turns it off). */
  built?: boolean;
  /** While another process builds the blob: when to look at it again (at a later start). */
  retryAt?: number;
}

/**
 * The blob for a worker started with `args` (its own, after the bin): `extensions` when they
 * name an extension to load. Extensions it finds itself (its agent folder's, the project's,
 * its settings') are not looked for here: such a worker starts from the plain blob and
 * loads the chunks as a start without a snapshot does.
 */
export function snapshotKindFor(args: readonly string[]): SnapshotKind {
  return args.some((a) => a === "-e" || a === "--extension" || a.startsWith("--extension=")) ? "extensions" : "plain";
}

/** The node flags that start our worker from its snapshot. */
export class WorkerSnapshots {
  private readonly known = new Map<string, Known>();
  private readonly bundle: string;
  private readonly entry: string;

  /** `launcher` is the worker's bin (dist/cli/pi.cjs); `warn` goes to the supervisor's log. */
  constructor(
    private readonly launcher: string,
    private readonly warn: (message: string) => void,
  ) {
    this.bundle = join(dirname(launcher), "pi-worker.cjs");
    this.entry = join(dirname(launcher), "pi-snapshot.cjs");
  }

  /**
   * `--snapshot-blob FILE` for a worker started by this node with `env` (the environment it
   * will have: V8 reads its NODE_OPTIONS) and `args` (its own, which choose the blob's kind),
   * or nothing when there is no checked blob for it yet (one is then built for later
   * starts), or snapshots are off.
   */
  argsFor(env: NodeJS.ProcessEnv, args: readonly string[] = []): string[] {
    if (env.PI_ORCH_SNAPSHOT === "off") return [];
    const kind = snapshotKindFor(args);
    const options = `${kind} ${env.NODE_OPTIONS ?? ""}`;
    let known = this.known.get(options);
    if (!known) {
      let place: SnapshotPlace;
      try {
        place = snapshotPlace(this.bundle, env, undefined, kind);
      } catch {
        // No bundle beside the launcher (only the ESM build): nothing to snapshot.
        this.known.set(options, { place: { blob: "", keyFile: "", key: "" }, state: "off" });
        return [];
      }
      known = { place, state: "building" };
      this.known.set(options, known);
      this.check(known, env);
    }
    if (known.state === "building" && known.retryAt !== undefined && Date.now() >= known.retryAt) {
      known.retryAt = undefined;
      this.check(known, env);
    }
    if (known.state !== "ready") return [];
    // Checked once; after that only its size and time, for a blob replaced under us.
    try {
      const st = statSync(known.place.blob);
      if (st.size === known.size && st.mtimeMs === known.mtimeMs) return ["--snapshot-blob", known.place.blob];
    } catch {
      // gone: checked again below
    }
    known.state = "building";
    this.check(known, env);
    return [];
  }

  /** Check the blob on disk, and build it when it is missing, stale or corrupt. */
  private check(known: Known, env: NodeJS.ProcessEnv): void {
    const status = checkSnapshot(known.place);
    if (status === "ok") return this.ready(known);
    // Another supervisor is replacing the blob and its key: what was read is its build in
    // flight, not damage. Start without the blob and look again at a later start.
    if (snapshotBuildRunning(known.place)) return this.later(known);
    if (known.built) {
      known.state = "off";
      this.warn(
        `the worker startup snapshot ${known.place.blob} is ${status} again after it was built; workers start without it (slower). Remove it, or set PI_ORCH_SNAPSHOT=off`,
      );
      return;
    }
    known.built = true;
    if (status === "corrupt" || status === "stale")
      this.warn(`the worker startup snapshot ${known.place.blob} is ${status}; building it again`);
    void buildSnapshot(known.place, this.entry, this.launcher, env).then((problem) => {
      if (problem === SNAPSHOT_BUILD_BUSY) {
        // Lost the race to another builder: not a failure of ours.
        known.built = false;
        return this.later(known);
      }
      if (problem === undefined && checkSnapshot(known.place) === "ok") return this.ready(known);
      known.state = "off";
      this.warn(
        `could not build the worker startup snapshot for node ${process.version} (${problem ?? "it did not check out"}); workers start without it (slower, still correct). Set PI_ORCH_SNAPSHOT=off to stop trying, or PI_ORCH_CACHE_DIR to a writable folder`,
      );
    });
  }

  private later(known: Known): void {
    known.state = "building";
    known.retryAt = Date.now() + BUSY_RETRY_MS;
  }

  private ready(known: Known): void {
    try {
      const st = statSync(known.place.blob);
      known.size = st.size;
      known.mtimeMs = st.mtimeMs;
      known.state = "ready";
    } catch {
      known.state = "off";
    }
  }
}
