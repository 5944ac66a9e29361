/**
 * Text from tools, models and workers on its way to a person's terminal. A tool that
 * prints `\x1b]0;PWNED\x07\x1b[2J` must not retitle the window or clear the screen of
 * whoever runs `pi-orch attach`, `logs` or `prompt --wait`: control characters become
 * visible escapes (`\x1b`, `\r`), so the text still shows what the tool printed. Only
 * newlines and tabs stay, and, when colour is on, the few colour codes pi-orch's own
 * `Colors` write (a tool's red is then red too, which does no harm). Bidirectional
 * overrides (the "trojan source" characters) are shown as `\u{202e}` as well. `--json`
 * output does not go through here: it is data, escaped by JSON itself.
 */

/** The SGR sequences `cli/context.ts` `colors()` writes: bold, dim, normal, red, green, yellow, cyan, default. */
const OUR_SGR = /\x1b\[(?:1|2|22|31|32|33|36|39)m/y;

/** Bidirectional embedding, override and isolate controls. */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/;

/** `text` safe to write to a terminal; `colour` keeps pi-orch's own colour codes. Pure. */
export function terminalText(text: string, colour = false): string {
  let out = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const control = (code < 0x20 && code !== 0x0a && code !== 0x09) || (code >= 0x7f && code <= 0x9f);
    if (!control && !(code >= 0x202a && BIDI.test(text[i]!))) continue;
    if (code === 0x1b && colour) {
      OUR_SGR.lastIndex = i;
      const m = OUR_SGR.exec(text);
      if (m) {
        i += m[0].length - 1;
        continue;
      }
    }
    out += text.slice(start, i) + escapeChar(code);
    start = i + 1;
  }
  return start === 0 ? text : out + text.slice(start);
}

function escapeChar(code: number): string {
  if (code === 0x0d) return "\\r";
  if (code === 0x08) return "\\b";
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, "0")}`;
  return `\\u{${code.toString(16)}}`;
}
