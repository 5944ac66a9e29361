/**
 * In RPC mode stdout carries the protocol and nothing else: whatever an extension
 * writes to `process.stdout` (console output, an OSC notification) goes to stderr.
 * The mode writes through the stream returned here, which reaches the real stdout.
 */
import { Writable } from "node:stream";

/** Redirect `process.stdout.write` to stderr; returns the protocol's own way to stdout. */
export function guardStdout(): Writable {
  const stdout = process.stdout;
  const realWrite = stdout.write.bind(stdout) as (
    chunk: string | Uint8Array,
    cb?: (err?: Error | null) => void,
  ) => boolean;
  stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) =>
    (process.stderr.write as (...a: unknown[]) => boolean)(chunk, ...rest)) as typeof stdout.write;
  const protocol = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (realWrite(chunk)) callback();
      else stdout.once("drain", () => callback());
    },
  });
  stdout.on("error", (err) => protocol.destroy(err));
  return protocol;
}
