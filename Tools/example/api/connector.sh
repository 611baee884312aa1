#!/bin/sh
# A Tandem connector program for api_server.py, with curl: tandem app DB --connector
# 'exec:Tools/example/api/connector.sh http://127.0.0.1:8080'. Tandem runs it as
# `connector.sh BASE_URL upload|fetch` with the request on standard input (README.md, "Your own API").
# The retry contract: a 2xx answer is the outcome; a 4xx answer refuses the batch for good (Tandem
# then sends its transactions one at a time and sets the refused one aside); anything else (a 5xx
# answer, no answer, a timeout) exits non-zero, and Tandem retries the batch with backoff.
# One curl process per call: the answer's body, then its HTTP status on a line of its own.
set -u
base=$1 action=$2
answer=$(curl -sS -m 30 -w '\n%{http_code}' -H 'Content-Type: application/json' --data-binary @- "$base/$action") || exit 1
status=${answer##*
}
body=${answer%
*}
case $status in
  2??) printf '%s\n' "$body" ;;
  4??) printf '{"version":1,"batch":"refused","reason":"HTTP %s: %s"}\n' "$status" "$(printf '%s' "$body" | tr -d '"\\\n')" ;;
  *) printf 'HTTP %s: %s\n' "$status" "$body" >&2; exit 1 ;;
esac
