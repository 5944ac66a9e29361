/**
 * An event as `--mode rpc` and `--mode json` write it (pi 1.6's `toJsonEvent`): only
 * `message_update` changes, to its delta and the response's cumulative usage, without
 * the message so far (`message`, `partial`), which made a stream's output quadratic in
 * its length. `toolcall_start` names the call (id, tool), since its `partial` is gone.
 * Every other event leaves as the session emitted it. Pure.
 */
import type { WireAssistantMessageEvent, WireEvent, WorkerEvent } from "../../shared/schema/events.js";

/** The wire shape of `event`. */
export function toWireEvent(event: WorkerEvent): WireEvent {
  if (event.type !== "message_update") return event;
  const { partial, ...delta } = event.assistantMessageEvent;
  const message = event.message.role === "assistant" ? event.message : partial;
  let assistantMessageEvent: WireAssistantMessageEvent;
  if (delta.type === "toolcall_start") {
    const block = partial.content[delta.contentIndex];
    const call = block?.type === "toolCall" ? block : undefined;
    assistantMessageEvent = { ...delta, id: call?.id ?? "", toolName: call?.name ?? "" };
  } else assistantMessageEvent = delta;
  return { type: "message_update", usage: structuredClone(message.usage), assistantMessageEvent };
}
