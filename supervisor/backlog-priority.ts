/**
 * Which event log lines a full disk's bounded backlog gives up first. The streaming
 * snapshots of a message or tool call go first: they are most of a run's bytes, and the
 * message's or call's end carries the final state. Run boundaries, dialogs and what the
 * supervisor itself said go last: without them a client cannot tell that a run started
 * or ended (`prompt --wait` would wait forever) or why an agent changed state. Pure.
 */
import { SupervisorEvent } from "../shared/schema/supervisor-events.js";

/** Priorities of a backlog line: lower leaves first when the backlog is over its bound. */
export const BACKLOG_PRIORITY = { streaming: 0, ordinary: 1, boundary: 2 } as const;

const STREAMING: ReadonlySet<unknown> = new Set(["message_update", "tool_execution_update"]);

const BOUNDARIES: ReadonlySet<unknown> = new Set([
  "agent_start",
  "turn_end",
  "agent_end",
  "agent_settled",
  "extension_ui_request",
  // Every type of the supervisor's own events, from their schema: a new one is kept too.
  ...SupervisorEvent.anyOf.map((schema) => schema.properties.type.const),
]);

/** The backlog priority of the log line of an event of `type`. */
export function backlogPriority(type: unknown): number {
  if (STREAMING.has(type)) return BACKLOG_PRIORITY.streaming;
  return BOUNDARIES.has(type) ? BACKLOG_PRIORITY.boundary : BACKLOG_PRIORITY.ordinary;
}
