/**
 * The extension the prefix and mid-conversation oracles load on ours and on pi 1.6.0: its
 * commands change the active tools mid-session (`/only-read`, `/add-hello` registering a
 * new tool), the changes a session records as system patch messages. Plain JavaScript, as
 * both loaders take it.
 */

/** The extension's source; `extra` is more `pi.registerCommand(...)` calls for one caller. */
export function toolChangeExtension(extra = ""): string {
  return `export default function (pi) {
  pi.registerCommand("only-read", { description: "leave only read active", handler: async () => pi.setActiveTools(["read"]) });
  pi.registerCommand("add-hello", {
    description: "register a new tool and make it active",
    handler: async () => {
      pi.registerTool({
        name: "hello",
        label: "hello",
        description: "Say hello",
        parameters: { type: "object", properties: {} },
        execute: async () => ({ content: [{ type: "text", text: "hello" }], details: {} }),
      });
      pi.setActiveTools([...pi.getActiveTools(), "hello"]);
    },
  });
${extra}}
`;
}
