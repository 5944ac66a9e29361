/**
 * The `${NAME}` / `$NAME` templates of pi's config values (an MCP server's `env` and
 * `headers`): `$$` is a `$`, `$!` a `!`. Shared by the worker, which resolves them, and the
 * supervisor, which takes literal secrets out of a sandboxed worker's mcp.json. Pure.
 */

type Part = { type: "literal"; value: string } | { type: "env"; name: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NAME_PREFIX = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The literal and variable parts of a template. */
export function parseTemplate(value: string): Part[] {
  const parts: Part[] = [];
  const literal = (text: string) => {
    if (!text) return;
    const last = parts[parts.length - 1];
    if (last?.type === "literal") last.value += text;
    else parts.push({ type: "literal", value: text });
  };
  let i = 0;
  while (i < value.length) {
    const dollar = value.indexOf("$", i);
    if (dollar < 0) {
      literal(value.slice(i));
      break;
    }
    literal(value.slice(i, dollar));
    const next = value[dollar + 1];
    if (next === "$" || next === "!") {
      literal(next);
      i = dollar + 2;
      continue;
    }
    if (next === "{") {
      const end = value.indexOf("}", dollar + 2);
      const name = end < 0 ? "" : value.slice(dollar + 2, end);
      if (end >= 0 && NAME.test(name)) parts.push({ type: "env", name });
      else literal(end < 0 ? "$" : value.slice(dollar, end + 1));
      i = end < 0 ? dollar + 1 : end + 1;
      continue;
    }
    const match = NAME_PREFIX.exec(value.slice(dollar + 1));
    if (match) {
      parts.push({ type: "env", name: match[0] });
      i = dollar + 1 + match[0].length;
    } else {
      literal("$");
      i = dollar + 1;
    }
  }
  return parts;
}
