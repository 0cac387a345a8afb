#!/usr/bin/env bash
# Starts a throwaway PostgreSQL for the test suite and prints the URL to use
# as TEST_DATABASE_URL. The server listens on a Unix socket only (no TCP
# port to collide with), in a temporary directory; stop it with
#   scripts/ci-postgres.sh stop DIR
# Installs Debian's postgresql package when no server binaries are found.
set -euo pipefail

if [ "${1:-}" = "stop" ]; then
	dir="$2"
	pgbin="$(cat "$dir/pgbin")"
	if [ "$(id -u)" = 0 ]; then
		su postgres -s /bin/sh -c "'$pgbin/pg_ctl' -D '$dir/data' -m fast stop" >/dev/null 2>&1 || true
	else
		"$pgbin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
	exit 0
fi

find_pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
pgbin="$(find_pgbin)"
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
	echo "installing postgresql (Debian package)…" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends postgresql >&2
	pgbin="$(find_pgbin)"
fi

dir="$(mktemp -d /tmp/groundcrew-pg.XXXXXX)"
echo "$pgbin" > "$dir/pgbin"
run() {
	# initdb and postgres refuse to run as root.
	if [ "$(id -u)" = 0 ]; then
		su postgres -s /bin/sh -c "$*"
	else
		sh -c "$*"
	fi
}
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
run "'$pgbin/initdb' -D '$dir/data' -A trust -U postgres --no-sync >'$dir/initdb.log' 2>&1"
run "'$pgbin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -o \"-k '$dir' -c listen_addresses='' -c fsync=off -c max_connections=200\" start >/dev/null"
run "'$pgbin/createdb' -h '$dir' -U postgres groundcrew"
echo "postgres://postgres@/groundcrew?host=$dir&sslmode=disable"
