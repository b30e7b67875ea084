#!/usr/bin/env python3
"""gather-send.py - a client of an agent's gather listener for the tests
(tests/integration/gather.bats): sends the bytes of a credential (read
from standard input, framed with its 4-byte big-endian length unless
--raw) to HOST:PORT and prints the answer's credential, or nothing when
the agent closes without one.  Exit 0 with an answer, 1 without."""
import socket
import struct
import sys


def main():
    raw = "--raw" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--raw"]
    host, port = args[0], int(args[1])
    data = sys.stdin.buffer.read().strip()
    msg = data if raw else struct.pack(">I", len(data)) + data
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(msg)
        buf = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            buf += chunk
    if len(buf) < 4:
        return 1
    n = struct.unpack(">I", buf[:4])[0]
    if len(buf) != 4 + n:
        print("answer of %d bytes, framed as %d" % (len(buf) - 4, n),
              file=sys.stderr)
        return 1
    sys.stdout.write(buf[4:].decode("ascii"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
