/**
 * The address of the queue of `pi-orch run --queue` / `--worker` (`redis://HOST:PORT/QUEUE`):
 * parsed when the command line is, so a file of its own without typebox (queue-jobs.ts has
 * the job schemas), which every `pi-orch` start would otherwise load for the option parser.
 */

/** Where a queue lives. */
export interface QueueAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** `rediss://`: TLS. */
  tls: boolean;
  /** The BullMQ queue name. */
  queue: string;
}

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Parse `redis://[USER:PASSWORD@]HOST[:PORT]/QUEUE` (or `rediss://` for TLS); throws an Error saying what is expected. */
export function parseQueueUrl(text: string): QueueAddress {
  const expected = `expected redis://HOST:PORT/QUEUE such as redis://127.0.0.1:6379/agents, got "${text}"`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(expected);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") throw new Error(expected);
  if (url.hostname === "") throw new Error(`${expected} (no host)`);
  const queue = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (queue === "") throw new Error(`${expected} (no queue name after the port)`);
  if (!QUEUE_NAME.test(queue))
    throw new Error(
      `queue name "${queue}": use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  if (url.search !== "" || url.hash !== "") throw new Error(`${expected} (no ?query or #fragment)`);
  const port = url.port === "" ? 6379 : Number(url.port);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    tls: url.protocol === "rediss:",
    queue,
  };
}

/** The address without its password, for messages and logs. */
export function describeQueue(a: QueueAddress): string {
  const host = a.host.includes(":") ? `[${a.host}]` : a.host;
  return `${a.tls ? "rediss" : "redis"}://${a.username ? `${a.username}@` : ""}${host}:${a.port}/${a.queue}`;
}
