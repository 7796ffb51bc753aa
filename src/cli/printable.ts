// What the bin prints from a gateway's answer (docs/design.md#controller-bindings): text a
// terminal shows as text. A gateway's answer carries names and messages other people chose; an
// escape sequence in one could move the cursor, rewrite the screen or the window title, and a
// bidirectional control could make one id read as another. Control (C0 and C1), format
// (zero-width, bidirectional), surrogate and line-separator characters are replaced with `?`;
// in JSON they are written as \u escapes, so the JSON stays the same value.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu

/** one line of text, fit for a terminal */
export const printable = (s: string): string => s.replace(UNPRINTABLE, '?')

/** a JSON text with every such character escaped (JSON.stringify leaves C1, format and separators raw) */
export const printableJson = (v: unknown): string =>
  JSON.stringify(v).replace(UNPRINTABLE, (c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''))
