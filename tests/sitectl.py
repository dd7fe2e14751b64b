"""Serve a built site on 127.0.0.1 under a sub-path, as GitHub Pages serves a project site.

`SiteServer(site, gzip=True)` also compresses text types as Pages does (Content-Encoding:
gzip, level 6), and counts what it sends (`bytes_sent`, `paths`), for the benchmarks."""
import functools
import gzip as gzip_module
import http.server
import os
import sys
import threading
import time

# What Pages compresses: text, the text-like application types and WebAssembly (seen gzipped
# on Pages in go-app's issue #866, 2023; not checked from here). Zip archives and fonts go as they are.
GZIP_TYPES = ("text/", "application/javascript", "application/json", "application/xml", "image/svg+xml",
              "application/wasm")


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    prefix = "/course/"
    server_state = None  # a SiteServer with gzip, or None

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return "/nonexistent-outside-the-sub-path"
        return super().translate_path("/" + path[len(self.prefix):])

    def log_message(self, *args):
        pass

    def end_headers(self):
        if self.server_state is not None:
            self.send_header("Cache-Control", "max-age=600")  # what Pages sends
        super().end_headers()

    def _compressed(self):
        """(body, type) gzip-compressed for this request, or None to serve the file as it is."""
        state = self.server_state
        if state is None or not state.gzip or "gzip" not in self.headers.get("Accept-Encoding", ""):
            return None
        path = self.translate_path(self.path.split("?", 1)[0].split("#", 1)[0])
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].endswith("/"):
                return None  # the handler's own redirect to the folder's slash
            path = os.path.join(path, "index.html")
        if not os.path.isfile(path):
            return None
        kind = self.guess_type(path)
        if not kind.startswith(state.gzip_types):
            return None
        key = (path, os.stat(path).st_mtime_ns)
        if key not in state.cache:
            with open(path, "rb") as f:
                state.cache[key] = gzip_module.compress(f.read(), 6)
        return state.cache[key], kind

    def _send(self, with_body):
        packed = self._compressed()
        if packed is None:
            return super().do_GET() if with_body else super().do_HEAD()
        body, kind = packed
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)
            self.server_state.count(self.path, len(body))

    def do_GET(self):
        self._tracked(True)

    def do_HEAD(self):
        self._tracked(False)

    def _tracked(self, with_body):
        state = self.server_state
        if state is None:
            return self._send(with_body)
        state.busy(+1)
        try:
            self._send(with_body)
        finally:
            state.busy(-1)

    def copyfile(self, source, outputfile):  # an uncompressed body: counted as well
        start = source.tell()
        super().copyfile(source, outputfile)
        if self.server_state is not None:
            self.server_state.count(self.path, source.tell() - start)


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A browser that closes a page mid-download (a test's context, a benchmark's run) is no error."""
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class SiteServer:
    """`with SiteServer(site_dir) as url:` yields http://127.0.0.1:PORT/course/.

    With gzip=True, text types go out gzip-compressed (as on Pages) and every body sent is
    counted: `bytes_sent`, and `paths` (the paths requested, in order); `reset()` zeroes both,
    `quiet_for()` says how long no request has been under way."""

    def __init__(self, site_dir, prefix="/course/", gzip=False, gzip_types=GZIP_TYPES):
        self.gzip, self.gzip_types, self.cache = gzip, tuple(gzip_types), {}
        self._lock = threading.Lock()
        self.reset()
        attrs = {"prefix": prefix, "server_state": self if gzip else None}
        if gzip:
            attrs["protocol_version"] = "HTTP/1.1"  # keep-alive, as a real host (1.0: a connection per file)
        handler = functools.partial(type("H", (_SubPathHandler,), attrs), directory=str(site_dir))
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{prefix}"

    def reset(self):
        with self._lock:
            self.bytes_sent, self.paths = 0, []
            self.in_flight, self.last_activity = 0, time.monotonic()

    def busy(self, delta):
        with self._lock:
            self.in_flight += delta
            self.last_activity = time.monotonic()

    def quiet_for(self):
        """Seconds since the last request started or ended, 0 while one is under way."""
        with self._lock:
            return 0.0 if self.in_flight else time.monotonic() - self.last_activity

    def count(self, path, size):
        with self._lock:
            self.bytes_sent += size
            self.paths.append(path)

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self.url

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
