# The servers load.sh measures: how each is prepared, started, probed and stopped. Sourced by load.sh,
# which sets root, here, results, java, javac, classpath (after its build), model and cores.
#
# Each server runs in a session of its own (setsid), so that its workers (node:cluster, uvicorn)
# are counted together for the idle wait and RSS, and stopped together.

peer_cache="${JDLPACK_CACHE:-$HOME/.cache/jdlpack}"
peer_classes="$root/benchmarks/target/server-peers/java"
hash_of() { cat "$@" | sha256sum | cut -c1-16; } # the contents only: any checkout shares the cache
node_dir() { echo "$peer_cache/node/server-peer-$(hash_of "$here/peers/node/package.json")"; }
venv_dir() { echo "$peer_cache/venvs/server-peer-$(hash_of "$here/peers/python/requirements.txt")"; }

route_of() { # the ROUTE post.lua sends (the query's route=)
  case "$1" in jdlpack-numpy) echo numpy ;; *) echo "" ;; esac
}
query_of() { local r; r="$(route_of "$1")"; [ -z "$r" ] || echo "?route=$r"; }

# prepare SERVER: compiles or installs what it needs; fails with what to install on the last line.
prepare() {
  case "$1" in
    jdlpack | jdlpack-numpy) python3 -c 'import numpy' || { echo "python3 with NumPy is missing: pip install numpy"; return 1; } ;;
    jdlpack-ortjava) ;; # the default route, on ONNX Runtime Java's API: Java alone
    ort-java-*)
      if [ ! -f "$peer_classes/PeerServer.class" ] || [ -n "$(find "$here/peers/java" -newer "$peer_classes/PeerServer.class")" ]; then
        rm -rf "$peer_classes"
        mkdir -p "$peer_classes"
        "$javac" -d "$peer_classes" -cp "$classpath" "$here"/peers/java/*.java || { echo "the Java peers did not compile"; return 1; }
      fi
      grep -o 'onnxruntime-[0-9.]*jar' <<<"$classpath" | head -1 | sed 's/^/ort-java: /' >> "$results/versions.txt" ;;
    node-*)
      command -v node >/dev/null && command -v npm >/dev/null \
        || { echo "node or npm not found: install Node 20 or later with npm (apt-get install nodejs npm)"; return 1; }
      [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || { echo "node $(node --version) is too old: install Node 20 or later"; return 1; }
      local dir
      dir="$(node_dir)"
      if [ ! -d "$dir/node_modules/onnxruntime-node" ]; then
        mkdir -p "$dir"
        cp "$here/peers/node/package.json" "$dir/"
        # --ignore-scripts: onnxruntime-node's install script fetches GPU libraries from outside the
        # registry; the CPU binaries it needs are in the package itself.
        (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error) \
          || { rm -rf "$dir/node_modules"; echo "npm install onnxruntime-node failed: it needs the npm registry (npm view onnxruntime-node)"; return 1; }
      fi
      echo "node: $(node --version), onnxruntime-node $(node -p "require('$dir/node_modules/onnxruntime-node/package.json').version")" >> "$results/versions.txt" ;;
    fastapi-*)
      local venv options
      venv="$(venv_dir)"
      if [ ! -f "$venv/.complete" ]; then
        rm -rf "$venv"
        python3 -m venv "$venv" || { echo "python3 -m venv failed: apt-get install python3-venv"; return 1; }
        # Without an index that holds the packages pip would wait on the public one: the local wheel
        # index when there is one, or PEER_PIP_OPTIONS.
        options="${PEER_PIP_OPTIONS:-$([ -d /opt/pypi/simple ] && echo --index-url file:///opt/pypi/simple)}"
        # shellcheck disable=SC2086
        "$venv/bin/pip" install -q --disable-pip-version-check --timeout 20 $options -r "$here/peers/python/requirements.txt" \
          || { rm -rf "$venv"; echo "pip install -r benchmarks/server/peers/python/requirements.txt failed: it needs an index with onnxruntime, fastapi and uvicorn (PEER_PIP_OPTIONS)"; return 1; }
        touch "$venv/.complete"
      fi
      echo "fastapi: $("$venv/bin/python" -c 'import sys, onnxruntime, fastapi, uvicorn, numpy; print("python", sys.version.split()[0], "onnxruntime", onnxruntime.__version__, "fastapi", fastapi.__version__, "uvicorn", uvicorn.__version__, "numpy", numpy.__version__)')" >> "$results/versions.txt" ;;
    *) echo "unknown server $1 (see the list at the top of load.sh)"; return 1 ;;
  esac
}

server_sid=
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1/classify")" != 000 ]; }
# start_server SERVER PORT LOG-NAME: starts it in its own session and waits until it answers HTTP;
# returns 1 (after saying why) if it does not start.
start_server() {
  local server="$1" port="$2" log="$results/server-$3.log"
  if answers "$port"; then # another server there would be measured instead of this one
    echo "port $port is already taken: stop what listens there or set JDLPACK_SERVER_PORT" >&2
    exit 2
  fi
  local -a jvm
  read -r -a jvm <<<"${JVM_OPTIONS:--Xms2g -Xmx2g}"
  local -a command
  case "$server" in
    jdlpack | jdlpack-numpy | jdlpack-ortjava)
      # -Dserver.ort: which ONNX Runtime API the example server runs on (c, its default, or java).
      command=("$java" --enable-native-access=ALL-UNNAMED "${jvm[@]}" -Xlog:gc:file="$results/gc-$3.log" -Dserver.port="$port"
        -Dserver.ort="$([ "$server" = jdlpack-ortjava ] && echo java || echo c)" -cp "$classpath" org.jdlpack.examples.server.InferenceServer) ;;
    ort-java-expert | ort-java-tutorial)
      command=("$java" "${jvm[@]}" -Xlog:gc:file="$results/gc-$3.log" -cp "$peer_classes:$classpath" PeerServer
        "${server#ort-java-}" "$port" "$model") ;;
    node-1) command=(env NODE_PATH="$(node_dir)/node_modules" node "$here/peers/node/server.js" "$port" "$model" 1) ;;
    node-N) command=(env NODE_PATH="$(node_dir)/node_modules" node "$here/peers/node/server.js" "$port" "$model" "$cores") ;;
    fastapi-1) command=("$(venv_dir)/bin/python" "$here/peers/python/app.py" "$port" "$model" 1) ;;
    fastapi-N) command=("$(venv_dir)/bin/python" "$here/peers/python/app.py" "$port" "$model" "$cores") ;;
  esac
  setsid "${command[@]}" > "$log" 2>&1 < /dev/null &
  server_sid=$!
  for _ in $(seq 1 240); do
    # Any HTTP answer (405 to a GET) means it accepts; the workers of node-N and fastapi-N report
    # ready in their log first.
    if answers "$port"; then
      sleep 1 # the other workers of a multi-process server
      return 0
    fi
    kill -0 "$server_sid" 2>/dev/null || { tail -20 "$log" >&2; echo "$server did not start (see $log)" >&2; return 1; }
    sleep 0.5
  done
  echo "$server did not answer within 120 s (see $log)" >&2
  stop_server "$server_sid"
  return 1
}

session_pids() { ps -o pid= -s "$1" 2>/dev/null | tr -d ' '; }

# stop_server SID: TERM to the whole session, KILL after 15 s.
stop_server() {
  kill -TERM -- "-$1" 2>/dev/null || true
  for _ in $(seq 1 30); do
    [ -n "$(session_pids "$1")" ] || break
    sleep 0.5
  done
  kill -KILL -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# CPU ticks (utime + stime) of every process of a session.
session_ticks() {
  local total=0 pid t
  for pid in $(session_pids "$1"); do
    t="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13}')" || continue
    total=$((total + ${t:-0}))
  done
  echo "$total"
}

# wait_idle SID: waits (at most 60 s) until the server's processes together use under 10% of a core
# over half a second, so that requests still in flight after wrk stops do not spill into the next
# measurement; prints the seconds it waited.
wait_idle() {
  local start ticks before hz
  start=$(date +%s.%N)
  hz=$(getconf CLK_TCK)
  for _ in $(seq 1 120); do
    before=$(session_ticks "$1")
    sleep 0.5
    ticks=$(( $(session_ticks "$1") - before ))
    [ "$ticks" -lt $((hz / 20)) ] && break
  done
  python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')"
}

rss_kib() { # the RSS of every process of a session, KiB
  local total=0 pid r
  for pid in $(session_pids "$1"); do
    r="$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)" || continue
    total=$((total + ${r:-0}))
  done
  echo "$total"
}

stats() { curl -sf --max-time 5 "http://127.0.0.1:$port/stats" || true; }
