"""A ZeroMQ PUB socket (pyzmq on the real libzmq) that publishes the lines of
the files named on the command line, over and over, until its stdin closes.
A line "TOPIC<tab>MESSAGE" is sent as a two-part message (topic, message).
If ZMQ_PORT is set it binds that port instead of a random one.

It binds a random loopback port and prints it first, so the Go test can
connect; it repeats because a SUB socket that joins late (ZeroMQ's "slow
joiner") misses what was published before it subscribed.
"""
import os
import select
import sys

import zmq

ctx = zmq.Context()
pub = ctx.socket(zmq.PUB)
if os.environ.get("ZMQ_PORT"):
    port = int(os.environ["ZMQ_PORT"])
    pub.bind("tcp://127.0.0.1:%d" % port)
else:
    port = pub.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
msgs = []
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        msgs += [line.strip() for line in f if line.strip()]
while True:
    for m in msgs:
        if b"\t" in m:
            pub.send_multipart(m.split(b"\t", 1))
        else:
            pub.send(m)
    ready, _, _ = select.select([sys.stdin], [], [], 0.05)
    if ready and not sys.stdin.buffer.read(1):
        break
pub.close(linger=0)
ctx.term()
