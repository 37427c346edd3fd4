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
#   TCK_TRANSPORTS  transports (1.0-dev default "jsonrpc http_json grpc", 0.3.x "jsonrpc rest")
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
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
port=$(free_port)
grpc_port=$(free_port)
cat > "$work/lango.config.yaml" <<EOF
server: { host: 127.0.0.1, port: $port, grpcPort: $grpc_port }
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
# missing (the stubs only register their descriptors; the kit decodes
# google.rpc.Status details itself).
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
        file = descriptor_pb2.FileDescriptorProto(name=f"google/api/{name}.proto", package="google.api", syntax="proto3")
        if name == "field_behavior":
            # The real annotation (the kit's proto validator reads REQUIRED fields from it).
            file.dependency.append("google/protobuf/descriptor.proto")
            behavior = file.enum_type.add(name="FieldBehavior")
            for number, value in enumerate(("FIELD_BEHAVIOR_UNSPECIFIED", "OPTIONAL", "REQUIRED", "OUTPUT_ONLY",
                                            "INPUT_ONLY", "IMMUTABLE", "UNORDERED_LIST", "NON_EMPTY_DEFAULT",
                                            "IDENTIFIER")):
                behavior.value.add(name=value, number=number)
            F = descriptor_pb2.FieldDescriptorProto
            file.extension.add(name="field_behavior", number=1052, label=F.LABEL_REPEATED, type=F.TYPE_ENUM,
                               type_name=".google.api.FieldBehavior", extendee=".google.protobuf.FieldOptions")
        descriptor_pool.Default().Add(file)
        mod = types.ModuleType(f"google.api.{name}_pb2")
        if name == "field_behavior":
            mod.field_behavior = descriptor_pool.Default().FindExtensionByName("google.api.field_behavior")
        sys.modules[mod.__name__] = mod
        setattr(api, f"{name}_pb2", mod)
# The kit loads its generated messages twice, as `specification.generated.a2a_pb2` and (from its gRPC
# stubs) as `a2a_pb2`; Debian's protobuf (4.21) makes two classes per message then, and the kit's type
# checks fail on a message of the other copy. `a2a_pb2` is made the same module.
import importlib
import importlib.machinery
class _SameModule:
    def __init__(self, module):
        self.module = module
    def create_module(self, spec):
        return self.module
    def exec_module(self, module):
        pass
class _OneA2aPb2:
    def find_spec(self, name, path=None, target=None):
        if name != "a2a_pb2":
            return None
        return importlib.machinery.ModuleSpec(name, _SameModule(importlib.import_module("specification.generated.a2a_pb2")))
sys.meta_path.insert(0, _OneA2aPb2())
# Debian's grpcio (1.51) predates the `_registered_method` argument the kit's generated stubs pass (1.62):
# the channel's methods take it and drop it.
import grpc._channel
for _kind in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
    _method = getattr(grpc._channel.Channel, _kind)
    if "_registered_method" not in _method.__code__.co_varnames:
        def _dropping(self, *args, _m=_method, _registered_method=None, **kwargs):
            return _m(self, *args, **kwargs)
        setattr(grpc._channel.Channel, _kind, _dropping)
try:
    import google.rpc.status_pb2  # noqa: F401
except ImportError:
    # The kit's gRPC error validator reads google.rpc.Status and ErrorInfo: built here from their descriptors.
    import google
    from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory  # noqa: F401
    F = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.Default()
    def field(message, name, number, kind, label=F.LABEL_OPTIONAL, type_name=None):
        f = message.field.add(name=name, number=number, type=kind, label=label)
        if type_name:
            f.type_name = type_name
    status = descriptor_pb2.FileDescriptorProto(
        name="google/rpc/status.proto", package="google.rpc", syntax="proto3",
        dependency=["google/protobuf/any.proto"])
    m = status.message_type.add(name="Status")
    field(m, "code", 1, F.TYPE_INT32)
    field(m, "message", 2, F.TYPE_STRING)
    field(m, "details", 3, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".google.protobuf.Any")
    details = descriptor_pb2.FileDescriptorProto(
        name="google/rpc/error_details.proto", package="google.rpc", syntax="proto3")
    info = details.message_type.add(name="ErrorInfo")
    field(info, "reason", 1, F.TYPE_STRING)
    field(info, "domain", 2, F.TYPE_STRING)
    field(info, "metadata", 3, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".google.rpc.ErrorInfo.MetadataEntry")
    entry = info.nested_type.add(name="MetadataEntry")
    entry.options.map_entry = True
    field(entry, "key", 1, F.TYPE_STRING)
    field(entry, "value", 2, F.TYPE_STRING)
    bad = details.message_type.add(name="BadRequest")
    field(bad, "field_violations", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".google.rpc.BadRequest.FieldViolation")
    violation = bad.nested_type.add(name="FieldViolation")
    field(violation, "field", 1, F.TYPE_STRING)
    field(violation, "description", 2, F.TYPE_STRING)
    pool.Add(status)
    pool.Add(details)
    def message_class(full_name):
        descriptor = pool.FindMessageTypeByName(full_name)
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(descriptor)
        return message_factory.MessageFactory(pool).GetPrototype(descriptor)
    rpc = types.ModuleType("google.rpc")
    rpc.__path__ = []
    sys.modules["google.rpc"] = rpc
    google.rpc = rpc
    status_pb2 = types.ModuleType("google.rpc.status_pb2")
    status_pb2.Status = message_class("google.rpc.Status")
    error_details_pb2 = types.ModuleType("google.rpc.error_details_pb2")
    error_details_pb2.ErrorInfo = message_class("google.rpc.ErrorInfo")
    error_details_pb2.BadRequest = message_class("google.rpc.BadRequest")
    for mod in (status_pb2, error_details_pb2):
        sys.modules[mod.__name__] = mod
        setattr(rpc, mod.__name__.rsplit(".", 1)[1], mod)
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
  for transport in ${TCK_TRANSPORTS:-jsonrpc http_json grpc}; do
    for level in ${TCK_LEVELS:-must should}; do
      run "v1-$transport-$level" tests/compatibility/ -c "$work/pytest.ini" \
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
