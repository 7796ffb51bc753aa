// A URL fit to print (docs/design.md#configuration): any password replaced by `***`. Used for
// the ledger URL, in the start line and in a refused start's message.
export function redactUrl (raw: string): string {
  try {
    const u = new URL(raw)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return raw.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
  }
}
