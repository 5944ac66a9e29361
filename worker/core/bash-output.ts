/**
 * The output of the RPC `bash` command as pi 0.73 returns it: ANSI escape sequences
 * removed, carriage returns dropped, and control characters other than tab and
 * newline left out, so a client (and the model, through the `bashExecution` message)
 * gets plain text. Pure.
 */

// The `ansi-regex` pattern (CSI and OSC sequences, 7- and 8-bit introducers).
const ANSI =
  /[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?(?:\u0007|\u001B\u005C|\u009C))|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]))/g;

/** Plain text of a command's terminal output. */
export function plainBashOutput(text: string): string {
  let out = "";
  for (const char of text.replace(ANSI, "")) {
    const code = char.codePointAt(0)!;
    if (code === 0x0d) continue;
    if (code === 0x09 || code === 0x0a || (code > 0x1f && !(code >= 0xfff9 && code <= 0xfffb))) out += char;
  }
  return out;
}
