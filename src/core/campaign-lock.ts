// How long a mutation waits for its campaign's lock before 409 campaign_busy
// (docs/design.md#serialisation). The control plane waits this long; the configuration counts it
// into the longest request a socket may legitimately stay silent for (docs/design.md#http-edges).
// A leaf, so the configuration need not import control or ledger code for one number.
export const CAMPAIGN_LOCK_WAIT_MS = 2000
