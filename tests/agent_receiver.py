#!/usr/bin/env python3
# A loopback stand-in for Grafana Pyroscope's push endpoint, for tests/test_live_agent.c:
# answers POST /push.v1.PusherService/Push (Connect protocol, unary) with STATUS and an empty
# PushResponse, and keeps each request as DIR/NNNN.body with DIR/NNNN.meta (path and
# content type, one per line). Its port goes to DIR/port once it listens.
# usage: agent_receiver.py DIR [STATUS]
import http.server
import os
import sys

out = sys.argv[1]
status = int(sys.argv[2]) if len(sys.argv) > 2 else 200
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        count += 1
        name = os.path.join(out, "%04d" % count)
        with open(name + ".body.tmp", "wb") as f:
            f.write(body)
        with open(name + ".meta", "w") as f:
            f.write("%s\n%s\n" % (self.path, self.headers.get("Content-Type", "")))
        # the body last: its name says the request is whole
        os.rename(name + ".body.tmp", name + ".body")
        reply = b"" if status == 200 else b'{"code":"invalid_argument","message":"test refusal"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/proto" if status == 200 else "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(out, "port.tmp"), "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(os.path.join(out, "port.tmp"), os.path.join(out, "port"))
server.serve_forever()
