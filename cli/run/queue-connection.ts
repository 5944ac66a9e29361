/**
 * The Redis connection settings every queue client of pi-orch uses (producer, worker,
 * event reader), so all of them ride out a Redis restart the same way: commands wait
 * for the reconnect instead of failing (`maxRetriesPerRequest: null`, which BullMQ
 * workers require anyway), and reconnects back off up to two seconds.
 */
import type { RedisOptions } from "bullmq";
import type { QueueAddress } from "./queue-address.js";

/** ioredis options for a queue address. */
export function connectionOptions(a: QueueAddress): RedisOptions {
  return {
    host: a.host,
    port: a.port,
    ...(a.username !== undefined ? { username: a.username } : {}),
    ...(a.password !== undefined ? { password: a.password } : {}),
    ...(a.tls ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(100 * times, 2000),
  };
}

/**
 * Report connection errors once per outage, not on every reconnect attempt: the first
 * error of a kind is passed on, the same message again only after `quietMs`.
 */
export function oncePerOutage(report: (message: string) => void, quietMs = 30_000): (err: Error) => void {
  const last = new Map<string, number>();
  return (err) => {
    const message = err.message;
    const now = Date.now();
    const before = last.get(message);
    if (before !== undefined && now - before < quietMs) return;
    last.set(message, now);
    report(message);
  };
}
