#!/usr/bin/python3
# hostile-client.py - a local user attacking the node agent's socket, for
# the tests: for SECONDS it holds as many connections as it can (opened
# without waiting, refilled as the agent drops them), sends `status' on
# every one of them every 0.3 s, keeps some alive with one byte a second
# (slowloris) and floods the listen queue with connects.  It prints what
# it achieved as JSON: the agent must have answered it (it was a real
# load), and the tests check that root's requests got through all along.
#
#   hostile-client.py SOCKET SECONDS [MAX_CONNECTIONS]
import errno
import json
import resource
import select
import socket
import sys
import time

path = sys.argv[1]
seconds = float(sys.argv[2])
max_conn = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
max_conn = min(max_conn, hard - 32)

stats = {"connects": 0, "connect_refused": 0, "sent": 0, "ok_replies": 0,
         "busy_replies": 0, "other_replies": 0, "dropped_by_agent": 0,
         "most_held": 0}
held = {}          # fd -> socket
slow = set()       # fds kept alive one byte a second
end = time.monotonic() + seconds
last_spam = last_slow = 0.0


def close(fd):
    s = held.pop(fd, None)
    slow.discard(fd)
    if s is not None:
        s.close()


def top_up():
    while len(held) < max_conn:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.setblocking(False)
        try:
            s.connect(path)
        except OSError:
            # EAGAIN: the listen queue is full.  Counted, retried next round.
            stats["connect_refused"] += 1
            s.close()
            return
        stats["connects"] += 1
        held[s.fileno()] = s
        if len(slow) < 16:
            slow.add(s.fileno())


def send_all(fds, msg):
    for fd in list(fds):
        s = held.get(fd)
        if s is None:
            continue
        try:
            s.send(msg)
            stats["sent"] += 1
        except OSError:
            close(fd)


def read_replies():
    if not held:
        return
    r, _, _ = select.select(list(held), [], [], 0)
    for fd in r:
        s = held[fd]
        try:
            data = s.recv(70000)
        except OSError:
            stats["dropped_by_agent"] += 1
            close(fd)
            continue
        if not data:
            stats["dropped_by_agent"] += 1
            close(fd)
        elif b'"code":"EBUSY"' in data:
            stats["busy_replies"] += 1
        elif data.startswith(b'{"ok":true'):
            stats["ok_replies"] += 1
        else:
            stats["other_replies"] += 1


while time.monotonic() < end:
    top_up()
    stats["most_held"] = max(stats["most_held"], len(held))
    now = time.monotonic()
    if now - last_spam >= 0.3:
        send_all([fd for fd in held if fd not in slow], b'{"op":"status"}')
        last_spam = now
    if now - last_slow >= 1.0:
        send_all(slow, b'{')
        last_slow = now
    read_replies()
    time.sleep(0.01)
print(json.dumps(stats))
