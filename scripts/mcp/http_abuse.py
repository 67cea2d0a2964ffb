"""Abuse `condense proxy --listen` and report what it costs: sessions, children, held connections.

Usage:
  python3 scripts/mcp/http_abuse.py CONDENSE_BINARY [--initializes N] [--slowloris N]
                                     [--config FILE]

Starts the proxy on a free loopback port in front of tests/mcp/faulty_server.py, then
1. sends N `initialize` POSTs (default 60) and counts the answers by HTTP status and the
   upstream processes still running;
2. opens N slowloris connections (default 500) that send half a request line, and reports how
   long the proxy takes to close them (capped at 90 s).
Prints one JSON object. Only the standard library.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAULTY = os.path.join(HERE, "..", "..", "tests", "mcp", "faulty_server.py")
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "abuse", "version": "1"}},
})


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post_initialize(addr):
    host, port = addr
    with socket.create_connection(addr, timeout=30) as sock:
        body = INITIALIZE.encode()
        sock.sendall((
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body)
        response = b""
        while chunk := sock.recv(65536):
            response += chunk
    return int(response.split(b" ", 2)[1])


def running(spawn_log):
    alive = 0
    if not os.path.exists(spawn_log):
        return 0
    for line in open(spawn_log, encoding="utf-8"):
        try:
            with open(f"/proc/{int(line)}/stat", encoding="utf-8") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive += 1
        except (OSError, ValueError):
            pass
    return alive


def slowloris(addr, count, cap_s=90.0):
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(addr, timeout=5)
        sock.sendall(b"POST /mcp HT")
        sock.setblocking(False)
        sockets.append(sock)
    opened = time.monotonic()
    open_ones = set(range(count))
    closed_after = []
    while open_ones and time.monotonic() - opened < cap_s:
        for index in list(open_ones):
            try:
                if sockets[index].recv(1024) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                continue
            except OSError:
                pass
            closed_after.append(time.monotonic() - opened)
            open_ones.discard(index)
        time.sleep(0.05)
    for sock in sockets:
        sock.close()
    return {
        "connections": count,
        "closed": len(closed_after),
        "still_open_after_s": None if not open_ones else cap_s,
        "last_closed_after_s": round(max(closed_after), 2) if closed_after else None,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--initializes", type=int, default=60)
    parser.add_argument("--slowloris", type=int, default=500)
    parser.add_argument("--config")
    options = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="condense-abuse-")
    spawn_log = os.path.join(scratch, "spawns")
    port = free_port()
    command = [options.binary, "proxy", "--listen", f"127.0.0.1:{port}"]
    if options.config:
        command += ["--config", options.config]
    command += ["--", sys.executable, FAULTY, "healthy", "--spawn-log", spawn_log]
    proxy = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "CONDENSE_LOG": "error"})
    addr = ("127.0.0.1", port)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(addr, timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        statuses = {}
        for _ in range(options.initializes):
            status = post_initialize(addr)
            statuses[str(status)] = statuses.get(str(status), 0) + 1
        time.sleep(1)
        report = {
            "initialize_statuses": statuses,
            "upstreams_running": running(spawn_log),
            "slowloris": slowloris(addr, options.slowloris),
        }
        print(json.dumps(report))
    finally:
        proxy.kill()
        proxy.wait()


if __name__ == "__main__":
    main()
