// What the bin prints from a gateway's answer (docs/design.md#finding-unresolved): text a terminal
// shows as text. An answer carries names and messages other people chose — a JWT's name claim
// becomes a ledger caller — and an escape sequence in one could clear the screen, move the cursor
// or set the window title, so that the operator reads a listing the gateway never sent; a
// bidirectional control could make one id read as another. Control (C0, DEL, C1), format
// (zero-width, bidirectional), lone surrogate and line-separator characters are replaced with `?`
// (an escape sequence loses its ESC, so the rest is plain text); in JSON they are written as \u
// escapes, so the JSON stays the same value.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu

/** one line of text, fit for a terminal */
export const printable = (s: string): string => s.replace(UNPRINTABLE, '?')

/** a JSON text with every such character escaped (JSON.stringify leaves DEL, C1, format and separators raw) */
export const printableJson = (v: unknown): string =>
  JSON.stringify(v).replace(UNPRINTABLE, (c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''))
