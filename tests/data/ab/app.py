"""A service in another language than the bench crate, for the tests of `cargo loadbench ab`.

GET / answers `ok` after SLEEP seconds asleep and WORK seconds of CPU time: a pull request that
makes it slower edits these two lines. It listens on 127.0.0.1:$PORT, as `--serve` asks. On
SIGTERM it writes how many requests it answered to $SERVED_DIR/<side>-<pid>, when that is set.
"""
import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLEEP = 0.004
WORK = 0.001

served = 0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The head and the body are two writes: with Nagle's algorithm the body would wait for the
    # client to acknowledge the head, 40 ms later.
    disable_nagle_algorithm = True

    def do_GET(self):
        global served
        time.sleep(SLEEP)
        start = time.thread_time()
        while time.thread_time() - start < WORK:
            pass
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with lock:
            served += 1

    def log_message(self, *args):
        pass


def stop(*_):
    folder = os.environ.get("SERVED_DIR")
    if folder:
        side = os.environ.get("LOADBENCH_SIDE", "none")
        with open(os.path.join(folder, f"{side}-{os.getpid()}"), "w") as f:
            f.write(str(served))
    os._exit(0)


signal.signal(signal.SIGTERM, stop)
server = ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler)
server.daemon_threads = True
print(f"listening on port {os.environ['PORT']}", flush=True)
server.serve_forever()
