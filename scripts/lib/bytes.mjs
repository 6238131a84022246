// Typed arrays joined end to end: shared by the GGUF writer, the malformed-file corpus and the tests.

/** One array of `Type` (Uint8Array unless given) holding `parts` one after another. */
export function concatArrays(parts, Type = Uint8Array) {
  const out = new Type(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
