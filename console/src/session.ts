// The bearer token the operator pasted (docs/operating.md#console): kept in sessionStorage —
// this tab only, gone when it closes — never in a cookie (the gateway reads none, and a cookie
// would ride along on requests the console did not make) and never in a URL (the page's address
// and its history carry page names only). It leaves the page only in the Authorization header of
// the console's own calls to this gateway.

const KEY = 'openoperator-gateway.console.token'

export const session = {
  token (): string | null {
    return sessionStorage.getItem(KEY)
  },
  signIn (token: string): void {
    sessionStorage.setItem(KEY, token)
  },
  signOut (): void {
    sessionStorage.removeItem(KEY)
  }
}
