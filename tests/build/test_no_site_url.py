"""Built without SITE_URL (for any static server, as the README promises) and served under
a sub-path: the 404 page's stylesheets, scripts and links resolve, no page names a made-up
address, and the sitemap lists the students' pages only."""
import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlsplit

import pytest

from sitectl import _SubPathHandler
from support import ROOT

PREFIX = "/course/"


class _PagesLikeHandler(_SubPathHandler):
    """Like GitHub Pages: a path that is not there gets 404.html, with status 404."""
    prefix = PREFIX

    def send_error(self, code, message=None, explain=None):
        page = self.directory + "/404.html"
        if code != 404:
            return super().send_error(code, message, explain)
        with open(page, "rb") as f:
            body = f.read()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@pytest.fixture(scope="module")
def plain_site(tmp_path_factory):
    """The site built with SITE_URL unset, served at http://127.0.0.1:PORT/course/."""
    out = tmp_path_factory.mktemp("plain") / "site"
    env = {k: v for k, v in os.environ.items() if k != "SITE_URL"}
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out)],
                            capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_PagesLikeHandler, directory=str(out)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield out, f"http://127.0.0.1:{httpd.server_address[1]}{PREFIX}"
    httpd.shutdown()
    httpd.server_close()


def fetch(url):
    try:
        with urllib.request.urlopen(url) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def references(html):
    """Every URL the page loads or links to (stylesheets, scripts, icons, links), without fragments."""
    return {u.split("#")[0] for u in re.findall(r'(?:href|src)="([^"]+)"', html)} - {""}


@pytest.mark.parametrize("path", ["404.html", "no-such-page"])
def test_the_404_page_resolves_its_styles_and_links_under_a_sub_path(plain_site, path):
    _, root = plain_site
    url = root + path
    status, html = fetch(url)
    assert status == (200 if path == "404.html" else 404) and "404" in html
    refs = references(html)
    local = {urljoin(url, u) for u in refs if not u.startswith(("https://", "http://", "data:", "mailto:"))}
    assert any(u.endswith(".css") and "/assets/stylesheets/main." in u for u in local), refs
    assert any(u.endswith(".js") for u in local) and root + "c4/l1-ffn/" in local, refs
    for u in sorted(local):
        assert u.startswith(root), f"{path}: {u} is outside the site's sub-path"
        assert fetch(u)[0] == 200, f"{path}: {u} does not load"


def test_no_page_names_an_address_it_was_not_given(plain_site):
    site, _ = plain_site
    for page in sorted(site.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        assert 'rel="canonical"' not in html and "127.0.0.1" not in html, page.relative_to(site)
    assert "<loc>" not in (site / "sitemap.xml").read_text(encoding="utf-8")


def test_the_sitemap_lists_the_students_pages_only(served_site):
    site, root = served_site
    locs = re.findall(r"<loc>([^<]+)</loc>", (site / "sitemap.xml").read_text(encoding="utf-8"))
    assert root in locs and root + "c4/l1-ffn/" in locs and root + "c4/l2-residual/" in locs
    assert not [u for u in locs if urlsplit(u).path.startswith(PREFIX + "authors/")], locs
    assert (site / "authors" / "gallery" / "index.html").exists()  # built, only not listed
