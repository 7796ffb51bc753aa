#!/usr/bin/env bash
# Regenerates the test-only TLS material in test/fixtures/tls: a CA the tests hand to the
# gateway (UPSTREAM_CA_FILE) with a server certificate for 127.0.0.1/localhost, and a second,
# unknown CA with its own server certificate. CA keys are deleted after signing.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/tls"
mkdir -p "$dir"
cd "$dir"
ext=$(mktemp)
trap 'rm -f "$ext"' EXIT
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$ext"
for name in trusted unknown; do
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$name-ca.key" -out "$name-ca.pem" -days 36500 -subj "/CN=$name test CA" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$name-server.key" -out "$name-server.csr" -subj "/CN=localhost" 2>/dev/null
  openssl x509 -req -in "$name-server.csr" -CA "$name-ca.pem" -CAkey "$name-ca.key" -CAcreateserial \
    -out "$name-server.pem" -days 36500 -extfile "$ext" 2>/dev/null
  rm -f "$name-server.csr" "$name-ca.key" "$name-ca.srl"
done
openssl verify -CAfile trusted-ca.pem trusted-server.pem
