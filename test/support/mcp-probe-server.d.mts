import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/** A probe server named `name` (default `probe`); connect it to a transport. */
export function createProbeServer(name?: string): Server;
