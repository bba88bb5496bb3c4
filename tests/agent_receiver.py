#!/usr/bin/env python3
# A loopback stand-in for the agent's servers, for tests/test_live_agent.c: Grafana Pyroscope's
# push endpoint (POST /push.v1.PusherService/Push, Connect protocol, unary: an empty
# PushResponse) and an OpenTelemetry Collector's OTLP/HTTP profiles path
# (POST /v1development/profiles: an empty ExportProfilesServiceResponse). Each request is kept
# as DIR/NNNN.body with DIR/NNNN.meta (path and content type, one per line) and DIR/NNNN.status
# (what it was answered: the HTTP status, or "closed"). Its port goes to DIR/port once it
# listens. Faults, read at each request so that a test can change them while it runs:
#   DIR/status  the HTTP status to answer (else STATUS, 200 by default)
#   DIR/delay   seconds to wait before answering (a slow server)
#   DIR/close   present: the connection is closed in the middle of the reply
# usage: agent_receiver.py DIR [STATUS] [--port N] [--tls CERT KEY]
import http.server
import os
import socketserver
import ssl
import sys
import threading
import time

args = sys.argv[1:]
out = args.pop(0)
port, tls, rest = 0, None, []
while args:
    a = args.pop(0)
    if a == "--port":
        port = int(args.pop(0))
    elif a == "--tls":
        tls = (args.pop(0), args.pop(0))
    else:
        rest.append(a)
default_status = int(rest[0]) if rest else 200
# a restart in the same folder numbers on
count = len([n for n in os.listdir(out) if n.endswith(".body")])
lock = threading.Lock()


def fault(name):
    try:
        with open(os.path.join(out, name)) as f:
            return f.read().strip()
    except OSError:
        return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            count += 1
            name = os.path.join(out, "%04d" % count)
        status = int(fault("status") or default_status)
        delay = float(fault("delay") or 0)
        closing = fault("close") is not None
        with open(name + ".body.tmp", "wb") as f:
            f.write(body)
        with open(name + ".meta", "w") as f:
            f.write("%s\n%s\n" % (self.path, self.headers.get("Content-Type", "")))
        with open(name + ".status", "w") as f:
            f.write("closed\n" if closing else "%d\n" % status)
        # the body last: its name says the request is whole
        os.rename(name + ".body.tmp", name + ".body")
        if delay:
            time.sleep(delay)
        if closing:
            # half a status line, then the connection goes
            self.wfile.write(b"HTTP/1.1 2")
            self.wfile.flush()
            self.close_connection = True
            return
        otlp = self.path.endswith("/v1development/profiles")
        if status == 200:
            reply, ctype = b"", "application/x-protobuf" if otlp else "application/proto"
        else:
            reply, ctype = b'{"code":"invalid_argument","message":"test refusal"}', "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", port), Handler)
if tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls[0], tls[1])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(os.path.join(out, "port.tmp"), "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(os.path.join(out, "port.tmp"), os.path.join(out, "port"))
server.serve_forever()
