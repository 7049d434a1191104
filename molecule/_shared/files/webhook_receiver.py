"""Test only: a loopback webhook receiver. Each POST is appended to OUT as one JSON line, {"path", "body"}, and
answered 200; at most 1 MiB of a body is read, and the file stops growing past 1000 lines.

usage: webhook_receiver.py PORT OUT"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT, OUT = int(sys.argv[1]), sys.argv[2]


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 1 << 20))
        try:
            with open(OUT, encoding="utf-8") as handle:
                lines = sum(1 for _line in handle)
        except OSError:
            lines = 0
        if lines < 1000:
            try:
                parsed = json.loads(body or b"null")
            except ValueError:
                parsed = body.decode(errors="replace")
            with open(OUT, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"path": self.path, "body": parsed}) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", PORT), Receiver).serve_forever()
