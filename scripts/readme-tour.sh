#!/usr/bin/env bash
# Runs README.md's tour as written: every ```sh runnable block, in order, in
# one shell, against a stack started by scripts/run.sh (as `make run` does)
# on free ports and a fresh DATA_DIR. A curl answered with anything but 2xx
# fails it (curl runs with --fail-with-body), as does any failing command.
# `make test` runs it after `make build`; it needs curl and jq.
set -euo pipefail
cd "$(dirname "$0")/.."

for cmd in curl jq; do
	command -v "$cmd" >/dev/null || { echo "readme-tour: $cmd is required (the README's tour uses it)" >&2; exit 1; }
done
for b in search grounding rag notifier gateway search-index rag-ingest; do
	[ -x "bin/$b" ] || { echo "readme-tour: bin/$b is missing; run make build" >&2; exit 1; }
done

# free_port sets port to a loopback port nothing listens on and no earlier
# call chose, from a range the kernel does not hand out for outgoing
# connections by default.
taken=" "
free_port() {
	for _ in $(seq 1 200); do
		port=$((20000 + RANDOM % 12000))
		case "$taken" in *" $port "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			taken="$taken$port "
			return
		fi
	done
	echo "readme-tour: no free port found" >&2
	exit 1
}

work=$(mktemp -d)
export DATA_DIR="$work/data" LOG_FORMAT=text
for v in SEARCH_ADDR GROUNDING_ADDR RAG_ADDR NOTIFIER_ADDR GATEWAY_ADDR \
	SEARCH_ADMIN_ADDR GROUNDING_ADMIN_ADDR RAG_ADMIN_ADDR NOTIFIER_ADMIN_ADDR GATEWAY_ADMIN_ADDR; do
	free_port
	export "$v=127.0.0.1:$port"
done

log="$work/stack.log"
scripts/run.sh >"$log" 2>&1 &
stack=$!
finish() {
	status=$?
	kill -TERM "$stack" 2>/dev/null || true
	wait "$stack" 2>/dev/null || true
	if [ "$status" -ne 0 ]; then
		echo "readme-tour: FAILED (exit $status); the stack's log:" >&2
		tail -n 60 "$log" >&2 || true
	fi
	rm -rf "$work"
	exit "$status"
}
trap finish EXIT INT TERM

# scripts/run.sh prints this once every service is ready and the runbooks
# are indexed.
for _ in $(seq 1 300); do
	grep -q "groundcrew is running" "$log" && break
	kill -0 "$stack" 2>/dev/null || { echo "readme-tour: the stack stopped during start-up" >&2; exit 1; }
	sleep 0.2
done
grep -q "groundcrew is running" "$log" || { echo "readme-tour: the stack was not ready after 60s" >&2; exit 1; }

# The runnable blocks, localhost:8080 pointed at this stack's gateway.
tour="$work/tour.sh"
{
	echo 'set -euo pipefail'
	echo 'curl() { command curl --fail-with-body "$@"; }'
	awk '/^```sh runnable$/ {on=1; next} on && /^```$/ {on=0; print ""; next} on {print}' README.md |
		sed "s#localhost:8080#${GATEWAY_ADDR}#g"
} >"$tour"
blocks=$(grep -c '^```sh runnable$' README.md || true)
[ "$blocks" -gt 0 ] || { echo "readme-tour: README.md has no \`\`\`sh runnable blocks" >&2; exit 1; }

echo "readme-tour: running $blocks blocks of README.md against $GATEWAY_ADDR"
timeout 600 bash -x "$tour" 2>&1 | sed -u 's/^/  /'
echo "readme-tour: every runnable block of README.md ran"
