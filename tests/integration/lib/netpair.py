#!/usr/bin/python3
# netpair.py - the two ends of io-net.bats's network jobs, run in two
# Slurm jobs: "listen PROTO FAMILY PORTFILE COUNTFILE" receives until
# the sender is done and writes down the bytes it received; "send PROTO
# FAMILY PORTFILE BYTES" sends BYTES to the port the listener wrote;
# "write tcp FAMILY PORTFILE BYTES" the same with write(2) on the socket
# rather than send(2) (io-pertick.bats: the kernel counts the one as IO,
# not the other).
# UDP is sent one datagram at a time, each acknowledged by one byte, so
# that loopback drops nothing and both ends move the same bytes.
import os
import socket
import sys
import time

CHUNK = 60000


def family_of(name):
    return socket.AF_INET6 if name == "6" else socket.AF_INET


def loopback(name):
    return "::1" if name == "6" else "127.0.0.1"


def listen(proto, fam, portfile, countfile):
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(family_of(fam), kind)
    s.bind((loopback(fam), 0))
    if proto == "tcp":
        s.listen(1)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(tmp, portfile)
    got = 0
    if proto == "tcp":
        c, _ = s.accept()
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            got += len(b)
    else:
        s.settimeout(60)
        while True:
            b, peer = s.recvfrom(1 << 16)
            if b == b"end":
                break
            got += len(b)
            s.sendto(b"k", peer)
    with open(countfile, "w") as f:
        f.write("%d\n" % got)


def send(proto, fam, portfile, total, by_write=False):
    for _ in range(600):
        if os.path.exists(portfile):
            break
        time.sleep(0.1)
    port = int(open(portfile).read())
    buf = b"x" * CHUNK
    left = total
    if proto == "tcp":
        s = socket.create_connection((loopback(fam), port))
        while left > 0:
            if by_write:
                n = os.write(s.fileno(), buf[:min(left, CHUNK)])
            else:
                n = s.send(buf[:min(left, CHUNK)])
            left -= n
        s.close()
        return
    s = socket.socket(family_of(fam), socket.SOCK_DGRAM)
    s.settimeout(10)
    s.connect((loopback(fam), port))
    while left > 0:
        n = s.send(buf[:min(left, CHUNK)])
        left -= n
        s.recv(16)
    s.send(b"end")


if __name__ == "__main__":
    if sys.argv[1] == "listen":
        listen(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        send(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
             sys.argv[1] == "write")
