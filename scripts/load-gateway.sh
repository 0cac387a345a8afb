#!/usr/bin/env bash
# REST through the gateway vs the same RPC over direct gRPC, side by side in
# one run (issue #8). Starts search and the gateway on loopback with the
# example runbooks indexed, then drives search.SearchService/Search with ghz
# (gRPC) and POST /v1/search with hey (REST) at the same concurrency.
#   make load-gateway [CONCURRENCY=32 REQUESTS=20000 RATE=1600]
# Two passes: flat out (throughput; at saturation p50 is set by throughput,
# Little's law: clients / requests per second), then the same clients at a
# fixed total RATE below saturation, where the difference in p50 is what
# the gateway adds to a request rather than queueing for the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
c="${CONCURRENCY:-32}"
n="${REQUESTS:-20000}"
rate="${RATE:-1600}"
data="$(mktemp -d)"
export DATA_DIR="$data" LOG_LEVEL="${LOG_LEVEL:-warn}" GATEWAY_RATE_LIMIT=0
export SEARCH_ADDR=127.0.0.1:50151 SEARCH_ADMIN_ADDR=127.0.0.1:9191 GATEWAY_ADDR=127.0.0.1:8180 GATEWAY_ADMIN_ADDR=127.0.0.1:9190
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
bin/search >"$data/search.log" 2>&1 & pids+=($!)
bin/gateway >"$data/gateway.log" 2>&1 & pids+=($!)
for _ in $(seq 1 100); do curl -fsS "http://$SEARCH_ADMIN_ADDR/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
bin/search-index -addr "$SEARCH_ADDR" examples/runbooks >/dev/null
body='{"query":"checkout-api 5xx errors","maxResults":3}'
# Warm both paths (connections, caches) before measuring.
bin/hey -n 500 -c "$c" -m POST -T application/json -d "$body" "http://$GATEWAY_ADDR/v1/search" >/dev/null
bin/ghz --insecure -c "$c" -n 500 --call groundcrew.search.v1.SearchService/Search -d "$body" "$SEARCH_ADDR" >/dev/null

echo "== direct gRPC: ghz -c $c -n $n search.SearchService/Search"
bin/ghz --insecure -c "$c" -n "$n" --call groundcrew.search.v1.SearchService/Search -d "$body" "$SEARCH_ADDR" \
	| grep -E "Requests/sec|Average|Fastest|Slowest|50 % in|90 % in|99 % in|\[OK\]|Error"
echo
echo "== REST through the gateway: hey -c $c -n $n POST /v1/search"
bin/hey -n "$n" -c "$c" -m POST -T application/json -d "$body" "http://$GATEWAY_ADDR/v1/search" \
	| grep -E "Requests/sec|Average|Fastest|Slowest|(50|90|99)%% in|^ +\[[0-9]{3}\][[:space:]]+[0-9]+ responses"

# At a fixed rate both sides are paced evenly: ghz's --rps over its clients,
# and for REST our open-loop loadgen (hey's -q paces each client on its own
# ticker, all started together, so requests arrive in bursts of $c).
secs=$(( n / rate ))
echo
echo "== direct gRPC at $rate req/s: ghz -c $c --rps $rate -n $n"
bin/ghz --insecure -c "$c" --rps "$rate" -n "$n" --call groundcrew.search.v1.SearchService/Search -d "$body" "$SEARCH_ADDR" \
	| grep -E "Requests/sec|Average|50 % in|90 % in|99 % in|\[OK\]|Error"
echo
echo "== REST through the gateway at $rate req/s: loadgen -rate $rate -duration ${secs}s POST /v1/search"
bin/loadgen -url "http://$GATEWAY_ADDR/v1/search" -rate "$rate" -duration "${secs}s" -body "$body"
