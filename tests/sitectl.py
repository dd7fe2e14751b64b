"""Serve a built site on 127.0.0.1 under a sub-path, as GitHub Pages serves a project site."""
import functools
import http.server
import threading


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    prefix = "/course/"

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return "/nonexistent-outside-the-sub-path"
        return super().translate_path("/" + path[len(self.prefix):])

    def log_message(self, *args):
        pass


class SiteServer:
    """`with SiteServer(site_dir) as url:` yields http://127.0.0.1:PORT/course/."""

    def __init__(self, site_dir, prefix="/course/"):
        handler = functools.partial(type("H", (_SubPathHandler,), {"prefix": prefix}), directory=str(site_dir))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{prefix}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self.url

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
