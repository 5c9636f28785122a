"""A ZeroMQ PUB socket (pyzmq on the real libzmq) that publishes the lines of
the files named on the command line, over and over, until its stdin closes.

It binds a random loopback port and prints it first, so the Go test can
connect; it repeats because a SUB socket that joins late (ZeroMQ's "slow
joiner") misses what was published before it subscribed.
"""
import select
import sys

import zmq

ctx = zmq.Context()
pub = ctx.socket(zmq.PUB)
port = pub.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
msgs = []
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        msgs += [line.strip() for line in f if line.strip()]
while True:
    for m in msgs:
        pub.send(m)
    ready, _, _ = select.select([sys.stdin], [], [], 0.05)
    if ready and not sys.stdin.buffer.read(1):
        break
pub.close(linger=0)
ctx.term()
