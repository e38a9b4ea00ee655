"""The lazy proxy's speed (run by benches/run.sh; prints figures, asserts nothing).

usage: proxy_bench.py FERRY REPLAY_SERVER CORPUS_DIR

Configures every snapshot of CORPUS_DIR as a server (examples/replay_server replays it),
lists each once so the cache holds its tools, then holds one session with
`ferry serve --servers` and times `find` over all of them and a warm `call`, beside the same
call sent straight to a replay server through a session this script holds.
"""
import glob, json, os, statistics, subprocess, sys, tempfile, time

ferry, replay, corpus = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="ferry-proxy-bench-")
env = dict(os.environ, FERRY_CACHE_DIR=f"{work}/cache", FERRY_CONFIG_DIR=f"{work}/config",
           FERRY_NO_DAEMON="1")
os.makedirs(env["FERRY_CONFIG_DIR"])
servers = {}
for path in sorted(glob.glob(f"{corpus}/*.tools.json")):
    servers[os.path.basename(path).replace(".tools.json", "")] = {"command": replay, "args": [path]}
json.dump({"mcpServers": servers}, open(f"{env['FERRY_CONFIG_DIR']}/servers.json", "w"))
for name in servers:
    subprocess.run([ferry, name], env=env, stdout=subprocess.DEVNULL, check=True)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}
proxy = subprocess.Popen([ferry, "serve", "--servers"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)


def call(i, name, arguments):
    message = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": name, "arguments": arguments, "_meta": META}}
    proxy.stdin.write((json.dumps(message) + "\n").encode())
    proxy.stdin.flush()
    while True:
        reply = json.loads(proxy.stdout.readline())
        if reply.get("id") == i:
            return reply


def timed(runs, fn):
    times = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1000)
    times = sorted(times[5:])
    return statistics.median(times), times[int(len(times) * 0.9)]


queries = ["create an issue", "take a screenshot", "read a file", "search code",
           "list pull requests", "get the current time", "navigate to a page", "add a comment"]
find = timed(200, lambda i: call(i, "find", {"query": queries[i % len(queries)]}))
through = timed(200, lambda i: call(1000 + i, "call", {"tool": "time/get_current_time",
                                                         "arguments": {"timezone": "UTC"}}))
proxy.kill()
proxy.wait()

direct = subprocess.Popen([replay, f"{corpus}/time.tools.json"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)


def direct_call(i, method="tools/call", params=None):
    message = {"jsonrpc": "2.0", "id": i, "method": method,
               "params": params or {"name": "get_current_time", "arguments": {"timezone": "UTC"}}}
    direct.stdin.write((json.dumps(message) + "\n").encode())
    direct.stdin.flush()
    return json.loads(direct.stdout.readline())


direct_call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}})
held = timed(200, lambda i: direct_call(i + 1))
direct.kill()
direct.wait()
tools = sum(len(json.load(open(p)).get("tools", [])) for p in glob.glob(f"{corpus}/*.tools.json"))
print(f"  h. ferry serve --servers over {len(servers)} servers ({tools} tools), one held session, 200 requests each")
print(f"    {'measurement':52} {'median ms':>10} {'p90 ms':>8}  target")
print(f"    {'find':52} {find[0]:>10.2f} {find[1]:>8.2f}  < 20 ms")
print(f"    {'call, warm backend (replay server)':52} {through[0]:>10.2f} {through[1]:>8.2f}")
print(f"    {'the same call on a session held to the backend':52} {held[0]:>10.2f} {held[1]:>8.2f}")
print(f"    {'  what the proxy adds':52} {through[0] - held[0]:>10.2f} {'':>8}  < 5 ms")
