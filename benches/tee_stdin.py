#!/usr/bin/env python3
"""Log what a client writes to an MCP stdio server, then run the server.

usage: tee_stdin.py LOGFILE -- CMD ARGS...

The process execs CMD, so the client's child *is* the server (same pid, same process
group, signals reach it). A forked copy of this script sits between the client's pipe
and the server's stdin: it appends every chunk to LOGFILE (flushed) before forwarding
it, so a line is in the log before the server can possibly answer it.
"""
import os
import sys


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write("usage: tee_stdin.py LOGFILE -- CMD ARGS...\n")
        sys.exit(2)
    log_path, command = sys.argv[1], sys.argv[3:]
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        # The tee: client stdin -> log + server stdin.
        os.close(read_end)
        # Do not hold the client's stdout/stderr pipes open past the server's exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        while True:
            try:
                chunk = os.read(0, 65536)
            except OSError:
                break
            if not chunk:
                break
            os.write(log, chunk)
            try:
                os.write(write_end, chunk)
            except OSError:
                break
        os._exit(0)
    # The server: its stdin is the tee's output; stdout/stderr stay the client's.
    os.close(write_end)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        os.execvp(command[0], command)
    except OSError as e:
        sys.stderr.write(f"tee_stdin.py: cannot run {command[0]}: {e}\n")
        os._exit(127)


if __name__ == "__main__":
    main()
