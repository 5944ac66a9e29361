/**
 * What the worker bundle and the build of its startup snapshot (cli/pi-snapshot.ts) agree
 * on; a file of its own, so the bundle imports nothing else of the snapshot's.
 */

/**
 * The global under which a snapshot's build gives the bundle a function that takes the
 * worker's `start`: set, the bundle evaluates without running, and `start` runs in each
 * process deserialised from the snapshot, with that process's argv, env and stdio.
 */
export const SNAPSHOT_HOOK = Symbol.for("pi-orch.snapshot-start");

/** What a startup snapshot holds: the bundle (`plain`), or the extension chunks evaluated too. */
export type SnapshotKind = "plain" | "extensions";

/**
 * The variable the build of a startup snapshot (shared/startup-snapshot.ts) sets to its kind:
 * with `extensions`, the bundle loads its extension chunks while the snapshot is built.
 */
export const SNAPSHOT_KIND_VAR = "PI_ORCH_SNAPSHOT_KIND";
