"""Calls per second through HAProxy in front of three `ferry serve --http` instances, against
one instance reached directly, in the same run (run by benches/run.sh; prints figures only).

python3 balancer_bench.py FERRY HAPROXY CALLS

Each client holds one keep-alive connection and sends 2026-07-28 requests one after the
other, 1 client and 8 clients at once: `tools/call` of a tool running /bin/echo (a process per
call), and `server/discover` (no process: what the balancer's hop costs shows). Rounds alternate
direct and balanced, so drift hits both alike; the median round is shown. HAProxy is
configured as docs/deploy.md says (round robin, health checks, retry on 503).
"""

import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

FERRY, HAPROXY, CALLS = sys.argv[1], sys.argv[2], int(sys.argv[3])
ROUNDS = 5
MANIFEST = """[server]
name = "bench"
concurrency = 8

[[tools]]
name = "say"
description = "Print the text."
command = ["echo", "{text}"]
params.text = { type = "string", required = true, description = "What to print" }
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_instance(work, name, public):
    process = subprocess.Popen(
        [FERRY, "serve", "--manifest", f"{work}/bench.toml", "--http", "127.0.0.1:0",
         "--no-token", "--instance", name, "--state-key-file", f"{work}/state.key",
         "--public-url", public],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        found = re.match(r"ferry serve: http://127\.0\.0\.1:(\d+)/mcp", line)
        if found:
            # Keep reading stderr so the server never blocks on it.
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, int(found.group(1))
    raise SystemExit(f"instance {name} did not start")


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}
# What each workload sends: its method, params and Mcp-Name header.
WORKLOADS = {
    "tools/call echo": ("tools/call", {"name": "say", "arguments": {"text": "hi"}}, "say"),
    "server/discover": ("server/discover", {}, None),
}


def request(workload, n):
    method, params, name = WORKLOADS[workload]
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": method,
                       "params": dict(params, _meta=META)})
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name:
        headers["Mcp-Name"] = name
    return body, headers


def client(port, workload, calls, errors):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for n in range(calls):
        body, headers = request(workload, n)
        connection.request("POST", "/mcp", body, headers)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200 or b'"isError":true' in body or b'"error"' in body:
            errors.append(response.status)
    connection.close()


def calls_per_second(port, workload, clients):
    errors = []
    each = max(1, CALLS // clients)
    threads = [threading.Thread(target=client, args=(port, workload, each, errors))
               for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    return each * clients / elapsed, len(errors)


def main():
    work = tempfile.mkdtemp(prefix="ferry-lb-bench.")
    with open(f"{work}/bench.toml", "w") as f:
        f.write(MANIFEST)
    with open(f"{work}/state.key", "w") as f:
        f.write(os.urandom(32).hex())
    lb = free_port()
    public = f"http://127.0.0.1:{lb}/mcp"
    processes, ports = [], []
    try:
        for name in ("a1", "a2", "a3"):
            process, port = start_instance(work, name, public)
            processes.append(process)
            ports.append(port)
        config = (
            "global\n  maxconn 1000\n"
            "defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n"
            "  timeout server 60s\n  option redispatch\n  retries 3\n  retry-on conn-failure 503\n"
            f"frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend ferry\n"
            "backend ferry\n  balance roundrobin\n  option httpchk\n"
            "  http-check send meth GET uri /healthz\n"
            "  http-check expect ! status 503 error-status L7OKC\n"
            "  http-check expect status 200\n  default-server check inter 1s\n"
            + "".join(f"  server a{i + 1} 127.0.0.1:{p}\n" for i, p in enumerate(ports)))
        with open(f"{work}/haproxy.cfg", "w") as f:
            f.write(config)
        balancer = subprocess.Popen([HAPROXY, "-db", "-f", f"{work}/haproxy.cfg"],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        processes.append(balancer)
        for _ in range(500):
            try:
                with socket.create_connection(("127.0.0.1", lb), timeout=1):
                    break
            except OSError:
                time.sleep(0.01)
        # Warm up both paths (first process spawns, HAProxy's first connections).
        calls_per_second(ports[0], "tools/call echo", 1)
        calls_per_second(lb, "tools/call echo", 1)
        rows = []
        for workload in WORKLOADS:
            for clients in (1, 8):
                figures = {"direct": [], "balanced": []}
                errors = 0
                for _ in range(ROUNDS):
                    for label, port in (("direct", ports[0]), ("balanced", lb)):
                        rate, failed = calls_per_second(port, workload, clients)
                        figures[label].append(rate)
                        errors += failed
                direct = statistics.median(figures["direct"])
                balanced = statistics.median(figures["balanced"])
                rows.append((workload, clients, direct, balanced, errors))
        print(f"  l. ferry serve --http behind HAProxy ({ROUNDS} rounds of {CALLS} requests, "
              "median round)")
        print(f"    {'request':16} {'clients':>7} {'one instance, /s':>17} "
              f"{'HAProxy + 3, /s':>16} {'ratio':>6} {'errors':>6}")
        for workload, clients, direct, balanced, errors in rows:
            print(f"    {workload:16} {clients:>7} {direct:>17.0f} {balanced:>16.0f} "
                  f"{balanced / direct:>6.2f} {errors:>6}")
        # An instance answers on one thread: three of them can use more of the machine's CPUs.
        print(f"    ({os.cpu_count()} CPUs; one instance answers on one thread, the commands it "
              "runs aside)")
    finally:
        for process in processes:
            process.kill()
            process.wait()


main()
