#!/bin/bash
# The fleet benchmark: 300 machines (tests/bench/fleet: flint's real
# fetcher, one per machine, in 10 processes) fetch one config at the same
# instant from nginx on 127.0.0.1, which serves 50 requests a second
# (limit_req, burst 20) and turns the rest away with 503. Run once with
# Ignition's retry schedule (doubling, no jitter) and once with flint's
# (decorrelated jitter), then once more with nginx sending Retry-After: 1
# on its 503s. Prints, for each, when the last machine had its config and
# the request rate per 100 ms from nginx's access log (peak against
# mean).
#
# usage: tests/bench/fleet/run.sh     (MACHINES=300 PROCS=10 RATE=50 in the environment)
#
# nginx runs with its own config in a temporary directory (never the
# system's), on a free port of 127.0.0.1, and is stopped at the end.
set -euo pipefail

root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"
export PATH="/usr/local/go/bin:$PATH"

machines="${MACHINES:-300}"
procs="${PROCS:-10}"
rate="${RATE:-50}"

nginx=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$nginx" ]; then
	echo "run.sh: needs nginx (apt-get install nginx-light)" >&2
	exit 2
fi

dir=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

go build -o "$dir/fleet" ./tests/bench/fleet

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/www" "$dir/tmp"
chmod 755 "$dir" "$dir/www"
printf '{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/fleet","contents":{"source":"data:,hello"}}]}}\n' > "$dir/www/config.ign"
chmod 644 "$dir/www/config.ign"

# write_conf RETRY_AFTER: nginx.conf, with Retry-After on the 503s when
# RETRY_AFTER is not empty.
write_conf() {
	local busy='return 503;'
	if [ -n "$1" ]; then
		busy="add_header Retry-After $1 always; return 503;"
	fi
	cat > "$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
	client_body_temp_path $dir/tmp/body;
	proxy_temp_path $dir/tmp/proxy;
	fastcgi_temp_path $dir/tmp/fastcgi;
	uwsgi_temp_path $dir/tmp/uwsgi;
	scgi_temp_path $dir/tmp/scgi;
	log_format fleet '\$msec \$status \$request_uri';
	access_log $dir/access.log fleet;
	limit_req_zone \$server_name zone=fleet:1m rate=${rate}r/s;
	limit_req_status 503;
	server {
		listen 127.0.0.1:$port;
		server_name fleet;
		root $dir/www;
		location / {
			limit_req zone=fleet burst=20 nodelay;
			error_page 503 = @busy;
		}
		location @busy { $busy }
	}
}
CONF
}

# run NAME JITTER RETRY_AFTER
run() {
	write_conf "$3"
	"$nginx" -p "$dir" -c "$dir/nginx.conf" &
	pid=$!
	for _ in $(seq 50); do
		if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "== $1"
	"$dir/fleet" -url "http://127.0.0.1:$port/config.ign" -machines "$machines" -procs "$procs" \
		-jitter="$2" -timeout 120s -access-log "$dir/access.log"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	echo
}

echo "fleet: $machines machines in $procs processes, nginx limit_req ${rate} r/s burst 20 on 127.0.0.1:$port"
echo
run "before: Ignition's schedule (doubling from 200 ms to 5 s, no jitter)" false ""
run "after: decorrelated jitter (200 ms to 5 s)" true ""
run "after, the server sends Retry-After: 1" true 1
