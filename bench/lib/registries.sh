# Sourced by bench/mirror.sh and bench/mirror-scale.sh (not a benchmark):
# Debian's docker-registry processes on loopback ports, each with its
# storage in $tmp/NAME/storage and its log in $tmp/NAME.log. The caller
# defines tmp and the associative array pids (NAME -> pid), and kills
# them on exit. REGISTRY_ACCESS_LOG=true logs a line per request (for
# counting them).

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_registry NAME ADDR: a registry serving plain HTTP at ADDR.
start_registry() {
  local dir=$tmp/$1
  mkdir -p "$dir"
  cat >"$dir/config.yml" <<CONFIG
version: 0.1
log: {level: error, accesslog: {disabled: $([ "${REGISTRY_ACCESS_LOG:-false}" = true ] && echo false || echo true)}}
storage:
  filesystem: {rootdirectory: $dir/storage}
  delete: {enabled: true}
http:
  addr: $2
CONFIG
  docker-registry serve "$dir/config.yml" >>"$tmp/$1.log" 2>&1 &
  pids[$1]=$!
  for _ in $(seq 200); do curl -fs "http://$2/v2/" >/dev/null && return; sleep 0.05; done
  cat "$tmp/$1.log" >&2
  exit 2
}

# restart_registry NAME ADDR: stopped, its storage removed, started again.
restart_registry() {
  kill "${pids[$1]}" && wait "${pids[$1]}" 2>/dev/null || true
  rm -rf "$tmp/$1/storage"
  start_registry "$1" "$2"
}
