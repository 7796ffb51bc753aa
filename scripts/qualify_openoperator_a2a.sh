#!/usr/bin/env bash
# The bounded, read-only deployment smoke of OpenOperator's A2A endpoint that the OpenOperator
# integration documents ask for: a thin wrapper around `openoperator-gateway qualify`
# (docs/operating.md#qualification, docs/design.md#qualification).
#
#   OPENOPERATOR_URL=https://openoperator.example \
#   SPYNEL_AGENT_ZERO_API_KEY_FILE=/run/secrets/upstream-key \
#   EXPECTED_SOURCE_SHA=<the deployment's full 40-hex commit> \
#   scripts/qualify_openoperator_a2a.sh [--json] [--observer-task ID]
#
# Also read: UPSTREAM_AUTH_SCHEME (bearer | x-api-key), UPSTREAM_CA_FILE, UPSTREAM_CONNECT_TIMEOUT_MS,
# UPSTREAM_READ_TIMEOUT_MS (the bound of each assertion). Prints one line per assertion
# (PASS name / FAIL name: reason / SKIP name: reason) on stdout, a summary on stderr; exits 0
# only when nothing FAILed (1 otherwise, 2 for a usage or configuration error). It never prints
# the credential or an authenticated answer, and it cannot mutate anything.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# in a checkout with the dev dependencies, build first so the smoke is the checked-out code;
# in an image (dist only, no compiler) run what is there. Build output goes to stderr.
if [[ -x "$root/node_modules/.bin/tsc" ]]; then
  (cd "$root" && npm run --silent build >&2)
fi
exec node "$root/dist/src/cli/index.js" qualify "$@"
