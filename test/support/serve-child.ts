/**
 * `runSupervisorServer` in a process of its own, for tests that SIGKILL a supervisor
 * (a stand-in for `pi-orch serve` that runs from the sources). Run it with
 * `node --import jiti/register test/support/serve-child.ts`; it reads its options as
 * JSON from `SERVE_CHILD_OPTS` (`home` required) and prints `ready <socket>` once listening.
 */
import { runSupervisorServer, type ServeOptions } from "../../cli/serve/supervisor-server.js";

const opts = JSON.parse(process.env.SERVE_CHILD_OPTS ?? "{}") as ServeOptions;
const server = await runSupervisorServer({ ...opts, onWarning: (m) => process.stderr.write(`serve-child: ${m}\n`) });
process.stdout.write(`ready ${server.socketPath}\n`);
await server.closed;
process.exit(0);
