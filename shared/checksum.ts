/**
 * A fast checksum for cache files and their keys: enough to tell a file cut short, a byte
 * changed or another source, and cheap to load where node's crypto is not (loading it costs a
 * start ~1-3 ms). Not for anything an adversary chooses: the caches it guards live in the
 * user's private cache folder or beside the build.
 */

/**
 * A 128-bit checksum of `bytes` (four FNV-style lanes over 32-bit words, the tail byte by
 * byte), as hex: a cache file with a byte changed or cut short is never run. Not node's
 * crypto, which costs a start ~3 ms to load: this one reads 150 KB in well under a millisecond.
 */
export function checksum(bytes: Uint8Array): string {
  // Words from the first byte on, wherever the bytes lie: a copy when they do not start on a 4-byte boundary.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes);
  const words = new Int32Array(aligned.buffer, aligned.byteOffset, aligned.length >> 2);
  let a = 0x811c9dc5;
  let b = 0x01000193;
  let c = 0x2f2f2f2f;
  let d = aligned.length | 0;
  const n = words.length & ~3;
  for (let w = 0; w < n; w += 4) {
    a = Math.imul(a ^ words[w]!, 0x01000193);
    b = Math.imul(b ^ words[w + 1]!, 0x01000193);
    c = Math.imul(c ^ words[w + 2]!, 0x01000193);
    d = Math.imul(d ^ words[w + 3]!, 0x01000193);
  }
  for (let w = n; w < words.length; w++) a = Math.imul(a ^ words[w]!, 0x01000193);
  for (let i = words.length * 4; i < aligned.length; i++) b = Math.imul(b ^ aligned[i]!, 0x01000193);
  return [a, b, c, d].map((x) => (x >>> 0).toString(16).padStart(8, "0")).join("");
}
