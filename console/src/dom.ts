// Building the page, safe by construction (docs/operating.md#console): every string becomes a
// text node, never markup — a card's name, a task's text, a caller's or a JWT subject's name is
// shown as the characters it holds. Attributes are set one by one, and none that runs code
// (`on…`) or leaves the console (an `href` that is not the console's own) can be given. There is
// no innerHTML anywhere in console/ (eslint refuses it), and the page's Content-Security-Policy
// would refuse an inline handler anyway.

export type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | boolean | undefined>

/** an href the console may link to: one of its own pages (`#/…`) or the runbook it ships */
const OWN_HREF = /^(#\/|runbooks\/[a-z-]+\.md$)/

export function h<K extends keyof HTMLElementTagNameMap> (tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (/^on/i.test(name) || name.toLowerCase() === 'style') throw new Error(`attribute ${name} is not set by the console`)
    if (name === 'href' && (typeof value !== 'string' || !OWN_HREF.test(value))) throw new Error('the console links to its own pages and runbook only')
    el.setAttribute(name, value === true ? '' : value)
  }
  append(el, ...children)
  return el
}

export function append (el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c)
  }
}

/** replaces what an element holds */
export function fill (el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, ...children)
}

/** a table: a header row, then one row per item, each cell a child */
export function table (headers: string[], rows: Child[][], attrs: Attrs = {}): HTMLTableElement {
  return h('table', attrs,
    h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((c) => h('td', {}, c))))))
}

/** a definition list of label → value */
export function facts (pairs: Array<[string, Child]>): HTMLDListElement {
  return h('dl', { class: 'facts' }, ...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]))
}

/** a value from a fixed vocabulary shown as a badge; the class comes from the vocabulary, never from the text */
export function badge (value: string, tone: 'good' | 'warn' | 'bad' | 'plain'): HTMLSpanElement {
  return h('span', { class: `badge ${tone}` }, value)
}

/** a duration in words, to the second: 3 min 12 s */
export function duration (ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${s % 60} s`
  const hours = Math.floor(m / 60)
  if (hours < 48) return `${hours} h ${m % 60} min`
  return `${Math.floor(hours / 24)} d ${hours % 24} h`
}

/** an ISO 8601 time with how far it is from now: `2026-12-05T10:42:13Z (in 12 s)` */
export function when (iso: string | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return '—'
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return iso
  return `${new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z')} (${relative(t, now)})`
}

/** the same as a table cell: the time kept on one line, how far it is below it */
export function whenCell (iso: string | null | undefined, now = Date.now()): Child {
  const t = iso === null || iso === undefined ? NaN : Date.parse(iso)
  if (Number.isNaN(t)) return iso ?? '—'
  return h('span', {}, h('time', { datetime: iso ?? '' }, new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z')), h('br'), h('small', {}, relative(t, now)))
}

const relative = (t: number, now: number): string => t > now ? `in ${duration(t - now)}` : `${duration(now - t)} ago`
