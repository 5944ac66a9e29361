/**
 * A small strict XML reader for tests (the JUnit reports): elements, attributes, text,
 * the five entities and numeric references. Throws on anything not well-formed, so a
 * test that parses a report also checks that it is valid XML.
 */

/** One element. */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e[0] === "#") return String.fromCodePoint(e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[e]!;
  });
}

/** Parse a document; returns its root element. */
export function parseXml(xml: string): XmlElement {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`invalid XML at ${i}: ${why}: ${JSON.stringify(xml.slice(i, i + 40))}`);
  };
  if (xml.startsWith("<?xml")) i = xml.indexOf("?>") + 2;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  while (i < xml.length) {
    if (xml[i] !== "<") {
      const end = xml.indexOf("<", i);
      const raw = xml.slice(i, end === -1 ? xml.length : end);
      if (/[<&](?!(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);)/.test(raw.replace(/</g, ""))) fail("bare &");
      if (stack.length > 0) stack[stack.length - 1].text += decode(raw);
      else if (raw.trim() !== "") fail("text outside the root");
      i = end === -1 ? xml.length : end;
      continue;
    }
    if (xml.startsWith("</", i)) {
      const m = /^<\/([\w:.-]+)\s*>/.exec(xml.slice(i)) ?? fail("bad end tag");
      const open = stack.pop() ?? fail("end tag without start");
      if (open.name !== m[1]) fail(`</${m[1]}> closes <${open.name}>`);
      i += m[0].length;
      continue;
    }
    const m = /^<([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*"[^"<]*")*)\s*(\/?)>/.exec(xml.slice(i)) ?? fail("bad start tag");
    const attrs: Record<string, string> = {};
    for (const a of m[2].matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) attrs[a[1]] = decode(a[2]);
    const el: XmlElement = { name: m[1], attrs, children: [], text: "" };
    if (stack.length > 0) stack[stack.length - 1].children.push(el);
    else if (root) fail("second root");
    else root = el;
    if (!m[3]) stack.push(el);
    i += m[0].length;
  }
  if (stack.length > 0 || !root) fail("unclosed element");
  return root!;
}

/** Every descendant element named `name`. */
export function findAll(el: XmlElement, name: string): XmlElement[] {
  return el.children.flatMap((c) => [...(c.name === name ? [c] : []), ...findAll(c, name)]);
}
