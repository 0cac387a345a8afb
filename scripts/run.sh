#!/usr/bin/env bash
# Starts all four services and the gateway from bin/ on embedded defaults
# (no keys, no network), prints where to point a browser or curl, and stops
# everything cleanly on Ctrl-C. `make run` calls it after building.
set -euo pipefail
cd "$(dirname "$0")/.."

export DATA_DIR="${DATA_DIR:-$PWD/.groundcrew}"
export LOG_FORMAT="${LOG_FORMAT:-text}"
export SEARCH_ADDR="${SEARCH_ADDR:-127.0.0.1:50051}"
export GROUNDING_ADDR="${GROUNDING_ADDR:-127.0.0.1:50052}"
export RAG_ADDR="${RAG_ADDR:-127.0.0.1:50053}"
export NOTIFIER_ADDR="${NOTIFIER_ADDR:-127.0.0.1:50054}"
export GATEWAY_ADDR="${GATEWAY_ADDR:-127.0.0.1:8080}"
mkdir -p "$DATA_DIR/logs"

pids=()
declare -A names=()
stop() {
	trap - INT TERM EXIT
	echo
	echo "stopping…"
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	echo "stopped. Data is kept in $DATA_DIR"
	exit 0
}
trap stop INT TERM EXIT

for svc in search grounding rag notifier gateway; do
	# Each service logs to the terminal and to $DATA_DIR/logs/<svc>.log.
	"bin/$svc" > >(tee -a "$DATA_DIR/logs/$svc.log" | sed -u "s/^/[$svc] /") 2>&1 &
	pids+=($!)
	names[$!]=$svc
done

gateway="http://${GATEWAY_ADDR/0.0.0.0/localhost}"
# Wait for readiness: every backend SERVING behind the gateway.
for _ in $(seq 1 150); do
	if curl -fsS "$gateway/readyz" >/dev/null 2>&1; then
		ready=1
		break
	fi
	for pid in "${pids[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "a service exited during start-up; see the log lines above" >&2
			exit 1
		fi
	done
	sleep 0.2
done
if [ -z "${ready:-}" ]; then
	echo "not ready after 30s: curl $gateway/readyz says:" >&2
	curl -sS "$gateway/readyz" >&2 || true
	exit 1
fi

# The example runbooks give the alert demo and grounded answers something to
# find. groundcrew's own runbooks (docs/runbooks, one per alert in
# deploy/prometheus) go in their own collection, "groundcrew": grounding
# consults them only for groundcrew's own alerts (alertname Groundcrew…, or
# service=groundcrew), never for yours. Indexing again replaces them
# (documents are keyed by URL).
bin/search-index -addr "$SEARCH_ADDR" examples/runbooks || echo "indexing examples/runbooks failed; the services run anyway" >&2
bin/search-index -addr "$SEARCH_ADDR" -collection groundcrew docs/runbooks || echo "indexing docs/runbooks failed; the services run anyway" >&2

cat <<MSG

groundcrew is running (data in $DATA_DIR, logs in $DATA_DIR/logs).

  Console      $gateway/console/
  API docs     $gateway/docs/
  OpenAPI      $gateway/openapi.json
  Readiness    curl $gateway/readyz
  Search       curl -H 'Content-Type: application/json' -X POST $gateway/v1/search -d '{"query":"checkout-api 5xx errors"}'
  Alert        curl -H 'Content-Type: application/json' -X POST $gateway/v1/alerts -d '{"text":"High error rate on checkout-api: 5xx > 10% for 5m"}'
  gRPC         grpcurl -plaintext $SEARCH_ADDR list   (bin/grpcurl after 'make tools')

Press Ctrl-C to stop.
MSG
# A service that stops (a crash, or one stopped on purpose to see how the
# others degrade: stop search and an alert still goes out, marked
# "Enrichment unavailable") is reported; the rest keep running until Ctrl-C.
running=("${pids[@]}")
while [ ${#running[@]} -gt 0 ]; do
	done_pid=
	status=0
	wait -n -p done_pid "${running[@]}" || status=$?
	[ -n "${done_pid:-}" ] || break
	echo "${names[$done_pid]:-a service} stopped (exit status $status); the others keep running, Ctrl-C stops them" >&2
	left=()
	for pid in "${running[@]}"; do [ "$pid" = "$done_pid" ] || left+=("$pid"); done
	running=("${left[@]}")
done
