"""Photo URLs at ingest are bounded: a server that drips its photo a byte a second is cut at
download_timeout_s and the photo is skipped with that reason while the rest of the CSV is ingested; a URL
on a loopback address is refused unless allow_private_urls is set, also when a public-looking first hop
redirects there. Only servers on 127.0.0.1 are used; 'public' addresses are simulated by the address rule's
own function, never contacted."""
from __future__ import annotations

import io
import time

import pytest

from app import build_services
from core.config import load_settings
from core.ingest import downloads
from core.ingest.downloads import DownloadError, DownloadPolicy
from tests.faultservers import FaultServer
from tests.photos import colour_image, write_observations


def _jpeg(i: int) -> bytes:
    buf = io.BytesIO()
    colour_image(i).save(buf, "JPEG")
    return buf.getvalue()


def test_a_dripping_photo_is_cut_at_the_time_limit_and_the_ingest_goes_on(tmp_path):
    limit = 2.0
    with FaultServer("drip", payload=_jpeg(1)) as drip, FaultServer("photo", payload=_jpeg(2)) as good:
        rows = [{"image_url": f"{drip.url}/slow.jpg", "taxon_name": "Rana aurora"},
                {"image_url": f"{good.url}/fine.jpg", "taxon_name": "Rana aurora"}]
        settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0,
                                 allow_private_urls=True, download_timeout_s=limit)
        t0 = time.monotonic()
        report = build_services(settings).ingestor().run(write_observations(tmp_path, rows))
        elapsed = time.monotonic() - t0
    assert elapsed < 3 * limit + 5, elapsed  # the ingest's own work plus one time limit
    assert report.added == 1
    (name, reason), = report.skipped
    assert name == f"{drip.url}/slow.jpg" and "still arriving after 2 s" in reason and "download_timeout_s" in reason


def test_a_server_that_never_answers_is_cut_too():
    with FaultServer("hang") as hang:
        t0 = time.monotonic()
        with pytest.raises(DownloadError, match=r"no answer within 1 s"):
            downloads.fetch(f"{hang.url}/x.jpg", DownloadPolicy(timeout_s=1.0, allow_private=True))
        assert time.monotonic() - t0 < 3.0


def test_loopback_urls_are_refused_by_default_with_a_note_and_the_ingest_goes_on(tmp_path):
    with FaultServer("photo", payload=_jpeg(3)) as good:
        rows = [{"image_url": f"{good.url}/a.jpg", "taxon_name": "Rana aurora"},
                {"image_url": f"http://localhost:{good.server_address[1]}/b.jpg", "taxon_name": "Rana aurora"}]
        settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0)
        report = build_services(settings).ingestor().run(write_observations(tmp_path, rows))
    assert good.calls == 0  # refused before connecting
    assert report.added == 0 and len(report.skipped) == 2
    for _, reason in report.skipped:
        assert "was refused" in reason and "a loopback address" in reason and "allow_private_urls" in reason


def test_a_redirect_to_a_private_address_is_refused(monkeypatch):
    """The first hop is allowed (the rule is told 127.0.0.1 is public for that port only); its redirect to
    another loopback port is checked again and refused."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

    with FaultServer("photo", payload=_jpeg(4)) as inner:
        target = f"http://127.0.0.2:{inner.server_address[1]}/secret.jpg"
        outer = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        threading.Thread(target=outer.serve_forever, daemon=True).start()
        real = downloads.refusal
        hops = []

        def refusal(address):
            hops.append(address)
            return "" if len(hops) == 1 else real(address)  # only the first hop passes as public
        monkeypatch.setattr(downloads, "refusal", refusal)
        try:
            with pytest.raises(DownloadError, match=r"was refused: 127.0.0.2 resolves to 127.0.0.2, a loopback"):
                downloads.fetch(f"http://127.0.0.1:{outer.server_address[1]}/go", DownloadPolicy(timeout_s=5))
        finally:
            outer.shutdown()
            outer.server_close()
    assert hops == ["127.0.0.1", "127.0.0.2"] and inner.calls == 0


@pytest.mark.parametrize("address, why", [("127.0.0.1", "loopback"), ("10.1.2.3", "private"),
                                          ("192.168.0.7", "private"), ("169.254.169.254", "link-local"),
                                          ("::1", "loopback"), ("fe80::1", "link-local"), ("fc00::5", "private"),
                                          ("::ffff:127.0.0.1", "loopback"), ("0.0.0.0", "unspecified"),
                                          ("100.64.0.1", "non-public"), ("8.8.8.8", ""), ("2606:4700::1111", "")])
def test_the_address_rule(address, why):
    got = downloads.refusal(address)
    assert (why in got) if why else got == ""


def test_the_size_cap_still_holds():
    with FaultServer("photo", payload=b"\xff\xd8\xff" + b"x" * 5000) as big:
        with pytest.raises(OSError, match="larger than"):
            downloads.fetch(f"{big.url}/big.jpg", DownloadPolicy(timeout_s=5, allow_private=True, max_bytes=1000))


def test_a_proxy_setting_is_named_and_the_photos_still_come_directly(tmp_path, monkeypatch):
    """HTTP_PROXY points at a port nobody listens on: the photo is still fetched (directly, from the checked
    address) and the ingest says once that the proxy was not used; NO_PROXY covering the host says nothing."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with FaultServer("photo", payload=_jpeg(4)) as good:
        rows = [{"image_url": f"{good.url}/a.jpg", "taxon_name": "Rana aurora"},
                {"image_url": f"{good.url}/b.jpg", "taxon_name": "Rana aurora"}]
        settings = load_settings(environ={}, data_dir=str(tmp_path / "data"), embedder="hash", checkpoint_s=0.0,
                                 allow_private_urls=True)
        report = build_services(settings).ingestor().run(write_observations(tmp_path, rows))
    assert report.added == 1 and good.calls >= 1  # the two rows are one picture: fetched directly
    named = [n for n in report.notices if "HTTP_PROXY is set" in n]
    assert len(named) == 1 and "not through the proxy" in named[0], report.notices
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert downloads.proxy_notice(["http://127.0.0.1:8000/a.jpg"]) == ""
    monkeypatch.delenv("HTTP_PROXY")
    assert downloads.proxy_notice(["https://example.org/a.jpg"]) == ""
