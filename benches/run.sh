#!/usr/bin/env bash
# ferry benchmarks: whole-process wall-clock times, median of many runs, printed as a table.
#
# No timed assertions: this prints figures only. Every ratio is computed within the same run
# against a minimal raw client (examples/raw_client.rs), so machine speed cancels out.
#
# usage: benches/run.sh [--no-build] [--quick]
#   --no-build  use the release binaries already in target/release
#   --quick     a tenth of the runs (a smoke test of the script, not a measurement)
# environment:
#   BENCH_TIMER=python  use the Python timer even when hyperfine is installed
#
# Needs the fixtures installed by tests/fixtures/setup.sh, node and python3.
# Timing uses hyperfine (--shell=none) when installed, else a Python timer defined below.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

BUILD=1
SCALE_DIV=1
for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD=0 ;;
        --quick) SCALE_DIV=10 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option: $arg (see --help)" >&2; exit 2 ;;
    esac
done
runs() { local n=$(( $1 / SCALE_DIV )); (( n < 3 )) && n=3; echo "$n"; }

FIXTURES=$ROOT/tests/fixtures
NODE_SERVER=$FIXTURES/node_modules/@modelcontextprotocol/server-everything/dist/index.js
TIME_SERVER=$FIXTURES/.venv/bin/mcp-server-time
if [[ ! -f $NODE_SERVER || ! -x $TIME_SERVER ]]; then
    echo "run tests/fixtures/setup.sh first" >&2
    exit 1
fi
for tool in node python3; do
    command -v "$tool" >/dev/null || { echo "benches/run.sh needs $tool on PATH" >&2; exit 1; }
done

if (( BUILD )); then
    echo "== cargo build --release --examples --bins" >&2
    cargo build --release --examples --bins >&2
fi
FERRY=$ROOT/target/release/ferry
RAW=$ROOT/target/release/examples/raw_client
for bin in "$FERRY" "$RAW" "$ROOT/target/release/examples/serve_bench" "$ROOT/target/release/examples/warm_bench"; do
    [[ -x $bin ]] || { echo "missing $bin (build without --no-build)" >&2; exit 1; }
done

# ferry's state lives in a scratch directory, so neither the user's cache nor config is read.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ferry-bench.XXXXXX")
trap 'env -u FERRY_NO_DAEMON "$FERRY" daemon stop >/dev/null 2>&1; rm -rf "$WORK"' EXIT
export FERRY_CACHE_DIR=$WORK/cache
export FERRY_CONFIG_DIR=$WORK/config
# Sections a-e measure the cold path: each call starts its server. Section g is the warm path.
export FERRY_NO_DAEMON=1
mkdir -p "$FERRY_CONFIG_DIR"
RESULTS=$WORK/results.jsonl
: > "$RESULTS"
# No project .mcp.json can be picked up from here.
cd "$WORK"

q() { printf '%q' "$1"; }   # quoting for a --cmd string / a command line
NODE_CMD="node $(q "$NODE_SERVER") stdio"
TIME_CMD=$(q "$TIME_SERVER")

# ---------------------------------------------------------------------------------------------
# Timing. Both timers run each command directly (no shell in between), stdin/stdout/stderr on
# /dev/null, and append one JSON line per command to $RESULTS.

cat > "$WORK/timer.py" <<'PY'
"""python3 timer.py RESULTS KEY RUNS WARMUP MODE LABEL PREPARE CMD [LABEL PREPARE CMD ...]

Runs the commands round-robin (interleaved, so drift hits every command alike): WARMUP
rounds untimed, then RUNS timed rounds. PREPARE (untimed, may be "") runs before each run of
its command. MODE "exit": wall time from posix_spawn to waitpid, output to /dev/null.
MODE "first-output": wall time from posix_spawn to the first byte on the command's stdout
(read through a pipe); the rest is drained and the process reaped untimed."""
import json, os, shlex, statistics, sys, time

def percentile(sorted_ms, p):
    k = (len(sorted_ms) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (k - lo)

def summary(ms):
    ms = sorted(ms)
    return {"runs": len(ms), "median_ms": statistics.median(ms), "p90_ms": percentile(ms, 0.9),
            "mean_ms": statistics.fmean(ms), "min_ms": ms[0], "max_ms": ms[-1]}

def main():
    results, key, runs, warmup, mode = sys.argv[1:6]
    runs, warmup = int(runs), int(warmup)
    rest = sys.argv[6:]
    cmds = [(rest[i], shlex.split(rest[i + 1]), shlex.split(rest[i + 2]))
            for i in range(0, len(rest), 3)]
    devnull = os.open(os.devnull, os.O_RDWR)
    quiet = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]

    def reap(label, argv, pid):
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code != 0:
            sys.exit(f"timer: {label}: exit status {code}: {shlex.join(argv)}")

    def timed(label, argv):
        if mode == "exit":
            start = time.perf_counter_ns()
            pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=quiet)
            reap(label, argv, pid)
            return (time.perf_counter_ns() - start) / 1e6
        r, w = os.pipe()
        actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, w, 1),
                   (os.POSIX_SPAWN_DUP2, devnull, 2), (os.POSIX_SPAWN_CLOSE, r)]
        start = time.perf_counter_ns()
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
        os.close(w)
        first = os.read(r, 65536)
        elapsed = (time.perf_counter_ns() - start) / 1e6
        while first and os.read(r, 65536):
            pass
        os.close(r)
        reap(label, argv, pid)
        if not first:
            sys.exit(f"timer: {label}: no output: {shlex.join(argv)}")
        return elapsed

    times = {label: [] for label, _, _ in cmds}
    for round_ in range(warmup + runs):
        for label, prepare, argv in cmds:
            if prepare:
                pid = os.posix_spawnp(prepare[0], prepare, os.environ, file_actions=quiet)
                reap(label + " (prepare)", prepare, pid)
            elapsed = timed(label, argv)
            if round_ >= warmup:
                times[label].append(elapsed)
    with open(results, "a") as out:
        for label, _, argv in cmds:
            row = {"key": key, "label": label, "command": shlex.join(argv), "timer": "python",
                   "mode": mode}
            row.update(summary(times[label]))
            out.write(json.dumps(row) + "\n")

main()
PY

cat > "$WORK/from_hyperfine.py" <<'PY'
"""python3 from_hyperfine.py RESULTS KEY EXPORT.json LABEL [LABEL ...]"""
import json, statistics, sys
results, key, export, labels = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def percentile(s, p):
    k = (len(s) - 1) * p; lo = int(k); hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)
with open(export) as f, open(results, "a") as out:
    for label, r in zip(labels, json.load(f)["results"]):
        ms = sorted(t * 1000 for t in r["times"])
        out.write(json.dumps({"key": key, "label": label, "command": r["command"],
            "timer": "hyperfine", "runs": len(ms), "median_ms": statistics.median(ms),
            "p90_ms": percentile(ms, 0.9), "mean_ms": statistics.fmean(ms),
            "min_ms": ms[0], "max_ms": ms[-1]}) + "\n")
PY

if [[ ${BENCH_TIMER:-} != python ]] && command -v hyperfine >/dev/null; then
    TIMER="hyperfine $(hyperfine --version | awk '{print $2}') (--shell=none)"
else
    TIMER="python3 posix_spawn timer (interleaved rounds)"
fi

# bench KEY RUNS LABEL PREPARE CMD [LABEL PREPARE CMD ...]: CMD and PREPARE are shell-quoted
# command lines; PREPARE ("" for none) runs untimed before every run of CMD.
bench() {
    local key=$1 n=$2; shift 2
    echo "== [$key] $n runs:" >&2
    local i
    for (( i = 1; i <= $#; i += 3 )); do echo "   ${!i}" >&2; done
    if [[ $TIMER == hyperfine* ]]; then
        local labels=() cmds=() prepares=()
        while (( $# )); do
            labels+=("$1"); prepares+=(--prepare "${2:-true}"); cmds+=("$3"); shift 3
        done
        hyperfine --shell=none --runs "$n" --warmup 3 --style basic "${prepares[@]}" \
            --export-json "$WORK/$key.json" "${cmds[@]}" >&2
        python3 "$WORK/from_hyperfine.py" "$RESULTS" "$key" "$WORK/$key.json" "${labels[@]}"
    else
        python3 "$WORK/timer.py" "$RESULTS" "$key" "$n" 3 exit "$@"
    fi
}

# check LABEL CMD...: runs once, must succeed, shows the first line of output.
check() {
    local label=$1; shift
    local out
    if ! out=$("$@" </dev/null 2>"$WORK/check.err"); then
        echo "check failed: $label: $*" >&2
        cat "$WORK/check.err" >&2
        exit 1
    fi
    printf '   check %-22s -> %s\n' "$label" "$(tr -s '\n ' ' ' <<<"$out" | cut -c1-70)" >&2
}

# log_mtimes: the server logs' modification times (ferry truncates a server's log when it starts one).
log_mtimes() { find "$FERRY_CACHE_DIR/logs" -type f -printf '%T@ %p\n' 2>/dev/null | sort; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# --- warm the caches (each first contact probes the server and lists its tools) ---------------
check "warm node cache" "$FERRY" --cmd "$NODE_CMD"
check "warm time cache" "$FERRY" --cmd "$TIME_CMD"
check "ferry echo" "$FERRY" --cmd "$NODE_CMD" echo --message hi
check "raw echo" "$RAW" -- node "$NODE_SERVER" stdio
check "ferry time" "$FERRY" --cmd "$TIME_CMD" get_current_time --timezone UTC
check "raw time (stateless)" "$RAW" --stateless --tool get_current_time --args '{"timezone":"UTC"}' -- "$TIME_SERVER"

# --- a. startup -----------------------------------------------------------------------------------
bench a "$(runs 200)" "process floor: /bin/true" "" "true" \
                      "ferry --version" "" "$(q "$FERRY") --version"

# --- b. listing and help from the cache (no server may start) ------------------------------------
# A call can leave the tools cache invalidated (server-everything announces tools/list_changed
# at start-up), so list once more right before measuring.
"$FERRY" --cmd "$NODE_CMD" </dev/null >/dev/null
before=$(log_mtimes)
bench b "$(runs 100)" "process floor: /bin/true" "" "true" \
                      "ferry --cmd node (listing)" "" "$(q "$FERRY") --cmd $(q "$NODE_CMD")" \
                      "ferry --cmd node echo --help" "" "$(q "$FERRY") --cmd $(q "$NODE_CMD") echo --help"
after=$(log_mtimes)
if [[ -n $before && $before == "$after" ]]; then
    NO_SPAWN="yes (server logs untouched)"
else
    NO_SPAWN="NO: a server log changed during the cached runs"
fi

# --- c. cold call, handshake-era server (node server-everything) ----------------------------------
# "ferry echo" is what repeated calls cost; "(cache listed)" re-lists untimed before each run,
# so a call that left the cache stale would show here as a difference between the two.
FERRY_ECHO="$(q "$FERRY") --cmd $(q "$NODE_CMD") echo --message hi"
RAW_ECHO="$(q "$RAW") -- node $(q "$NODE_SERVER") stdio"
RELIST_NODE="$(q "$FERRY") --cmd $(q "$NODE_CMD")"
bench c "$(runs 30)" "ferry echo (node)" "" "$FERRY_ECHO" \
                     "raw_client echo (node)" "" "$RAW_ECHO" \
                     "ferry echo (node, cache listed)" "$RELIST_NODE" "$FERRY_ECHO"

# --- d. cold call, stateless server (mcp-server-time) ---------------------------------------------
FERRY_TIME="$(q "$FERRY") --cmd $(q "$TIME_CMD") get_current_time --timezone UTC"
RAW_TIME="$(q "$RAW") --stateless --tool get_current_time --args $(q '{"timezone":"UTC"}') -- $(q "$TIME_SERVER")"
bench d "$(runs 20)" "ferry get_current_time" "" "$FERRY_TIME" \
                     "raw_client --stateless" "" "$RAW_TIME"

# --- c', d'. the same calls, timed to the first byte of output instead of process exit ------------
# (always the Python timer: hyperfine cannot stop the clock at the first output byte)
first_output() {
    local key=$1 n=$2; shift 2
    echo "== [$key] $n runs, to first output byte" >&2
    python3 "$WORK/timer.py" "$RESULTS" "$key" "$n" 3 first-output "$@"
}
first_output "c'" "$(runs 30)" "ferry echo (node)" "" "$FERRY_ECHO" \
                               "raw_client echo (node)" "" "$RAW_ECHO" \
                               "ferry echo (node, cache listed)" "$RELIST_NODE" "$FERRY_ECHO"
first_output "d'" "$(runs 20)" "ferry get_current_time" "" "$FERRY_TIME" \
                               "raw_client --stateless" "" "$RAW_TIME"

# --- e. what ferry sends on a cold call (cache warm) ---------------------------------------------
# A shim logs the server's stdin; its --cmd differs from the ones above, so it gets its own cache.
SHIM=$ROOT/benches/tee_stdin.py
count_requests() {  # LOGFILE -> "N|methods of requests|notifications"
    python3 - "$1" <<'PY'
import json, sys
requests, notes = [], []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if isinstance(msg, dict) and "method" in msg:
        (requests if "id" in msg else notes).append(msg["method"])
print(f"{len(requests)}|{', '.join(requests) or '-'}|{', '.join(notes) or '-'}")
PY
}
: > "$WORK/sent.txt"
TIME_LOG=$WORK/time-stdin.log
TIME_SHIM="python3 $(q "$SHIM") $(q "$TIME_LOG") -- $TIME_CMD"
: > "$TIME_LOG"; "$FERRY" --cmd "$TIME_SHIM" </dev/null >/dev/null
echo "stateless (time): first contact, listing|$(count_requests "$TIME_LOG")" >> "$WORK/sent.txt"
: > "$TIME_LOG"; check "ferry time via shim" "$FERRY" --cmd "$TIME_SHIM" get_current_time --timezone UTC
echo "stateless (time): call, cache warm|$(count_requests "$TIME_LOG")" >> "$WORK/sent.txt"
STATELESS_CALL=$(count_requests "$TIME_LOG" | cut -d'|' -f1)
NODE_LOG=$WORK/node-stdin.log
NODE_SHIM="python3 $(q "$SHIM") $(q "$NODE_LOG") -- $NODE_CMD"
: > "$NODE_LOG"; "$FERRY" --cmd "$NODE_SHIM" </dev/null >/dev/null
echo "handshake (node): first contact, listing|$(count_requests "$NODE_LOG")" >> "$WORK/sent.txt"
: > "$NODE_LOG"; check "ferry echo via shim" "$FERRY" --cmd "$NODE_SHIM" echo --message hi
echo "handshake (node): call, cache listed|$(count_requests "$NODE_LOG")" >> "$WORK/sent.txt"
: > "$NODE_LOG"; "$FERRY" --cmd "$NODE_SHIM" echo --message hi </dev/null >/dev/null
echo "handshake (node): call right after a call|$(count_requests "$NODE_LOG")" >> "$WORK/sent.txt"

echo "== [f] ferry serve: start-up, per-call overhead, 64 concurrent calls, RSS" >&2
SERVE_FIGURES=$("$ROOT/target/release/examples/serve_bench" "$FERRY" "$(runs 300)")

echo "== [g] the warm path: warm and cold calls, a held session, 20 at once, daemon RSS" >&2
WARM_FIGURES=$(env -u FERRY_NO_DAEMON "$ROOT/target/release/examples/warm_bench" "$FERRY" "$NODE_SERVER" "$(runs 50)")

# --- p. what each process costs, from perf stat: page faults and CPU per run -----------------------
# The warm rows go through a daemon started for them (and stopped after).
PERF_FIGURES=""
if command -v perf >/dev/null && perf stat -e page-faults true >/dev/null 2>&1; then
    echo "== [p] perf stat: page faults and CPU per process" >&2
    perf_row() {  # LABEL CMD...: "label faults cpu-ms"
        local label=$1; shift
        perf stat -x, -r "$(runs 200)" -e page-faults,task-clock "$@" </dev/null 2>&1 >/dev/null \
            | awk -F, -v l="$label" '$3=="page-faults"{f=$1} $3=="task-clock"{c=$1} END{printf "    %-44s %8.0f %10.3f\n", l, f, c}'
    }
    env -u FERRY_NO_DAEMON "$FERRY" --cmd "$NODE_CMD" echo --message hi </dev/null >/dev/null
    PERF_FIGURES=$(
        printf '  p. perf stat, mean of %s runs per row\n' "$(runs 200)"
        printf '    %-44s %8s %10s\n' "process" "faults" "CPU ms"
        perf_row "/bin/true" true
        perf_row "ferry --version" "$FERRY" --version
        perf_row "ferry listing, no daemon" "$FERRY" --cmd "$NODE_CMD"
        perf_row "ferry echo --help, no daemon" "$FERRY" --cmd "$NODE_CMD" echo --help
        unset FERRY_NO_DAEMON
        perf_row "ferry listing, daemon running" "$FERRY" --cmd "$NODE_CMD"
        perf_row "ferry echo --help, daemon running" "$FERRY" --cmd "$NODE_CMD" echo --help
        perf_row "ferry echo, warm" "$FERRY" --cmd "$NODE_CMD" echo --message hi
    )
    env -u FERRY_NO_DAEMON "$FERRY" daemon stop >/dev/null
fi

# --- t. the token meter's start-up: a cold `ferry tokens` builds the o200k_base encoder -----------
CORPUS=$ROOT/tests/corpus
EIGHT=()
for name in everything filesystem git github memory fetch context7 playwright; do
    [[ -f $CORPUS/$name.tools.json ]] && EIGHT+=(--from "$(q "$CORPUS/$name.tools.json")")
done
bench t "$(runs 20)" "ferry tokens --from everything --json" "" "$(q "$FERRY") tokens --from $(q "$CORPUS/everything.tools.json") --json" \
                     "ferry tokens, ${#EIGHT[@]} snapshots --json" "" "$(q "$FERRY") tokens ${EIGHT[*]} --json"

echo "== [h] the lazy proxy: find and a warm call over the corpus" >&2
PROXY_FIGURES=$(python3 "$ROOT/benches/proxy_bench.py" "$FERRY" "$ROOT/target/release/examples/replay_server" "$ROOT/tests/corpus")

# --- l. ferry serve --http behind a load balancer (HAProxy), against one instance directly --------
BALANCER_FIGURES=""
HAPROXY=$(command -v haproxy || { [[ -x /usr/sbin/haproxy ]] && echo /usr/sbin/haproxy; } || true)
if [[ -n $HAPROXY ]]; then
    echo "== [l] ferry serve behind HAProxy: calls per second, balanced and direct" >&2
    BALANCER_FIGURES=$(python3 "$ROOT/benches/balancer_bench.py" "$FERRY" "$HAPROXY" "$(runs 400)")
else
    echo "== [l] skipped: no haproxy (tests/fixtures/setup.sh installs it)" >&2
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ----------------------------------------------------------------------------------------
echo
echo "ferry benchmarks ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo "  machine : $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || uname -m), Linux $(uname -r)"
echo "  load avg: $LOAD_BEFORE (start), $LOAD_AFTER (end)"
echo "  ferry   : $("$FERRY" --version) ($FERRY)"
echo "  node    : $(node --version); python3: $(python3 --version | cut -d' ' -f2)"
echo "  timer   : $TIMER; whole processes, wall clock"
echo
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
targets = {("a", "ferry --version"): "<= 1.3x /bin/true",
           ("b", "ferry --cmd node (listing)"): "<= 2.0x /bin/true",
           ("b", "ferry --cmd node echo --help"): "<= 2.0x /bin/true",
           ("t", "ferry tokens --from everything --json"): "< 100 ms"}
headings = {"a": "a. start-up (to exit)", "b": "b. from the cache, no server, no daemon (to exit)",
            "t": "t. the token meter, cold (to exit)",
            "c": "c. cold call, handshake server: node server-everything (to exit)",
            "d": "d. cold call, stateless server: mcp-server-time (to exit)",
            "c'": "c'. as c, to the first byte of output",
            "d'": "d'. as d, to the first byte of output"}
print(f"  {'measurement':36} {'runs':>5} {'median ms':>10} {'p90 ms':>9} {'min ms':>8}  {'ratio':>6}  target")
print("  " + "-" * 92)
by_key = {}
for r in rows:
    by_key.setdefault(r["key"], []).append(r)
for key, group in by_key.items():
    print(f"  {headings.get(key, key)}")
    raw = next((r for r in group if r["label"].startswith("raw_client")), None)
    floor = next((r for r in group if r["label"].startswith("process floor")), None)
    for r in group:
        ratio, target = "", targets.get((key, r["label"]), "")
        if raw is not None and r is not raw:
            ratio = f"{r['median_ms'] / raw['median_ms']:.2f}"
            target = "ferry/raw <= 1.1" if key in ("c", "d") else "(ferry/raw)"
        elif floor is not None and r is not floor:
            ratio = f"{r['median_ms'] / floor['median_ms']:.2f}x"
        print(f"    {r['label']:34} {r['runs']:>5} {r['median_ms']:>10.2f} "
              f"{r['p90_ms']:>9.2f} {r['min_ms']:>8.2f}  {ratio:>6}  {target}")
PY
echo
echo "  b. cached listing started no server: $NO_SPAWN"
echo
echo "  e. JSON-RPC messages ferry wrote to the server's stdin (logged by benches/tee_stdin.py):"
printf '     %-42s %8s  %-40s %s\n' "case" "requests" "request methods" "notifications"
while IFS='|' read -r case n methods notes; do
    printf '     %-42s %8s  %-40s %s\n' "$case" "$n" "$methods" "$notes"
done < "$WORK/sent.txt"
if [[ $STATELESS_CALL == 1 ]]; then
    echo "     stateless cold call: exactly 1 request (expected 1)"
else
    echo "     stateless cold call: $STATELESS_CALL requests (expected exactly 1: tools/call)"
fi
echo
echo "$SERVE_FIGURES"
echo
echo "$WARM_FIGURES"
echo
if [[ -n $PERF_FIGURES ]]; then
    echo "$PERF_FIGURES"
    echo
fi
echo "$PROXY_FIGURES"
if [[ -n $BALANCER_FIGURES ]]; then
    echo
    echo "$BALANCER_FIGURES"
fi
