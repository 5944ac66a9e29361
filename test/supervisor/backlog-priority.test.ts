import { describe, expect, it } from "vitest";
import { BACKLOG_PRIORITY, backlogPriority } from "../../supervisor/backlog-priority.js";

describe("backlogPriority", () => {
  it.each([
    ["message_update", "streaming"],
    ["tool_execution_update", "streaming"],
    ["message_start", "ordinary"],
    ["message_end", "ordinary"],
    ["tool_execution_end", "ordinary"],
    ["turn_start", "ordinary"],
    ["queue_update", "ordinary"],
    ["agent_start", "boundary"],
    ["turn_end", "boundary"],
    ["agent_end", "boundary"],
    ["agent_settled", "boundary"],
    ["extension_ui_request", "boundary"],
    ["agent_status", "boundary"],
    ["worker_exited", "boundary"],
    ["run_interrupted", "boundary"],
    ["dialog_closed", "boundary"],
  ] as const)("%s is %s", (type, kind) => {
    expect(backlogPriority(type)).toBe(BACKLOG_PRIORITY[kind]);
  });
});
