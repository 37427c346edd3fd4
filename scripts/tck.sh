#!/usr/bin/env bash
# Runs a checkout of the A2A TCK (github.com/a2aproject/a2a-tck, branch
# 1.0-dev or 0.3.x) against a fresh lango node on 127.0.0.1 with the offline
# model, and prints pass/fail counts per run. It fetches nothing: the TCK
# checkout, Python 3 and the TCK's Python packages must already be there
# (Debian: python3-pytest python3-pytest-asyncio python3-httpx python3-grpcio
# python3-protobuf python3-jsonschema python3-jinja2 python3-requests
# python3-responses python3-deepdiff python3-yaml python3-dotenv).
#
# Usage: scripts/tck.sh <tck-checkout> [out-dir]
#   TCK_TRANSPORTS  transports (1.0-dev default "jsonrpc http_json", 0.3.x "jsonrpc rest")
#   TCK_LEVELS      1.0-dev levels (default "must should")
#   TCK_CATEGORIES  0.3.x categories (default "mandatory capabilities quality features transport-equivalence")
#   PYTHON          the interpreter (default /usr/bin/python3 when present, else python3)
# Each run's pytest output goes to <out-dir>/<run>.log (default: a new temp dir).
set -euo pipefail

tck=$(cd "${1:?usage: scripts/tck.sh <tck-checkout> [out-dir]}" && pwd)
out=${2:-$(mktemp -d /tmp/lango-tck-out.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}

if [ -d "$tck/tests/compatibility" ]; then kit=1.0
elif [ -d "$tck/tests/mandatory" ]; then kit=0.3
else echo "tck.sh: $tck is not an a2a-tck checkout (no tests/compatibility nor tests/mandatory)" >&2; exit 2
fi

[ -f "$root/dist/cli/main.js" ] || (cd "$root" && npm run -s build)

work=$(mktemp -d /tmp/lango-tck.XXXXXX)
node_pid=
cleanup() {
  if [ -n "$node_pid" ]; then kill "$node_pid" 2>/dev/null || true; wait "$node_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A fresh node: its own data dir, a free loopback port, the offline model.
# The TCK's push-notification receiver listens on localhost, which the node
# refuses by default (SSRF guard): this run opens loopback for push only.
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
cat > "$work/lango.config.yaml" <<EOF
server: { host: 127.0.0.1, port: $port }
dataDir: $work/data
logLevel: warn
agent: { provider: offline }
a2a:
  pushNotifications: { allowPrivateNetworks: true }
EOF
(cd "$work" && exec env -u OPENAI_API_KEY -u LANGO_API_KEY node "$root/dist/cli/main.js" --config "$work/lango.config.yaml" serve \
  > "$out/node.log" 2>&1) &
node_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -sf -o /dev/null "$url/.well-known/agent-card.json" && break
  kill -0 "$node_pid" 2>/dev/null || { echo "tck.sh: the node did not start; see $out/node.log" >&2; exit 1; }
  sleep 0.2
done

# Debian's python3-protobuf (3.21) lacks runtime_version and Debian has no
# googleapis-common-protos: the TCK's generated gRPC stubs import both just
# to load. A sitecustomize in the run's own dir stands in for them when
# missing; no gRPC test runs here (the node serves no gRPC).
mkdir -p "$work/py"
cat > "$work/py/sitecustomize.py" <<'EOF'
import sys, types
try:
    from google.protobuf import runtime_version  # noqa: F401
except ImportError:
    import google.protobuf
    m = types.ModuleType("google.protobuf.runtime_version")
    m.Domain = type("Domain", (), {"PUBLIC": 0})
    m.ValidateProtobufRuntimeVersion = lambda *a, **k: None
    sys.modules[m.__name__] = m
    google.protobuf.runtime_version = m
try:
    import google.api.annotations_pb2  # noqa: F401
except ImportError:
    import google
    from google.protobuf import descriptor_pb2, descriptor_pool
    api = types.ModuleType("google.api")
    api.__path__ = []
    sys.modules["google.api"] = api
    google.api = api
    for name in ("annotations", "client", "field_behavior", "http"):
        descriptor_pool.Default().Add(
            descriptor_pb2.FileDescriptorProto(name=f"google/api/{name}.proto", package="google.api", syntax="proto3"))
        mod = types.ModuleType(f"google.api.{name}_pb2")
        sys.modules[mod.__name__] = mod
        setattr(api, f"{name}_pb2", mod)
EOF
# The 1.0-dev kit asks for pytest >= 8 in its pyproject; Debian 12 has 7.2,
# which runs it: the run uses its own ini with the kit's markers.
cat > "$work/pytest.ini" <<'EOF'
[pytest]
asyncio_mode = auto
markers =
    core: core
    must: must
    should: should
    may: may
    grpc: grpc
    jsonrpc: jsonrpc
    http_json: http_json
    streaming: streaming
    integration: integration
EOF

summary=()
run() { # <name> <pytest args...>
  local name=$1; shift
  local status=0
  (cd "$tck" && PYTHONPATH="$work/py" "$python" -m pytest -p no:cacheprovider -q -rfEs --tb=short "$@") > "$out/$name.log" 2>&1 || status=$?
  local counts
  counts=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|deselected|error|xfailed)' "$out/$name.log" | tail -1 | sed -E 's/=+//g; s/ in [0-9.]+s.*//; s/^ +//')
  summary+=("$(printf '%-34s %s (exit %s)' "$name" "${counts:-no result}" "$status")")
}

if [ "$kit" = 1.0 ]; then
  for transport in ${TCK_TRANSPORTS:-jsonrpc http_json}; do
    for level in ${TCK_LEVELS:-must should}; do
      run "v1-$transport-$level" tests/compatibility/ --ignore=tests/compatibility/grpc -c "$work/pytest.ini" \
        --rootdir="$tck" --sut-host="$url" --transport="$transport" -m "$level" \
        --compatibility-report="$out/v1-$transport-$level-report"
    done
  done
else
  for transport in ${TCK_TRANSPORTS:-jsonrpc rest}; do
    for category in ${TCK_CATEGORIES:-mandatory capabilities quality features transport-equivalence}; do
      case $category in
        mandatory) args=(tests/mandatory/ -m "mandatory_jsonrpc or mandatory_protocol") ;;
        transport-equivalence) args=(tests/optional/multi_transport/ -m transport_equivalence) ;;
        *) args=("tests/optional/$category/") ;;
      esac
      # Over REST the kit runs its protocol tests only (as its run_tck.py does).
      if [ "$transport" = rest ] && [ "$category" = mandatory ]; then args=(tests/mandatory/protocol/ -m mandatory_protocol); fi
      [ "$transport" = rest ] && [ "$category" = transport-equivalence ] && continue
      run "v03-$transport-$category" "${args[@]}" --rootdir="$tck" --sut-url="$url" --test-scope=all \
        --transport-strategy="prefer_$transport"
    done
  done
fi

echo "A2A TCK $kit ($tck) against lango on $url; logs in $out"
printf '%s\n' "${summary[@]}"
