"""`python -m webapp`: the README's run command serves the app; --https serves TLS."""

import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

from cryptography import x509

from webapp_examples import REPO
from webapp.__main__ import https_server, main, parse_args
from webapp.tls import self_signed_certificate


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, context=None, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5, context=context) as response:
                return response.status, response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def failed_start(folder, *args):
    """Run `python -m webapp ARGS`, which must fail with a one-line message and announce no
    address it does not serve; return its stderr."""
    result = subprocess.run([sys.executable, "-m", "webapp", *args], cwd=folder,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "://" not in result.stdout
    return result.stderr


def test_defaults_bind_localhost_5000():
    args = parse_args([])
    assert (args.host, args.port, args.https) == ("127.0.0.1", 5000, False)
    args = parse_args(["--port", "8080", "--host", "0.0.0.0", "--https"])
    assert (args.host, args.port, args.https) == ("0.0.0.0", 8080, True)


def test_python_m_webapp_serves_the_start_page(tmp_path):
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    server = subprocess.Popen([sys.executable, "-m", "webapp", "--port", str(port)], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        status, page = wait_for(f"http://127.0.0.1:{port}/")
        assert status == 200 and "Take or choose a photo" in page
        status, doc = wait_for(f"http://127.0.0.1:{port}/api/openapi.json")
        assert '"openapi"' in doc
    finally:
        server.terminate()
        output = server.communicate(timeout=10)[0]
    assert f"http://127.0.0.1:{port}/" in output


def test_a_busy_port_is_a_one_line_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        stderr = failed_start(tmp_path, "--port", str(port))
    assert "cannot serve on" in stderr


def test_certificate_names_the_hosts_and_is_reused(tmp_path):
    cert, key = self_signed_certificate(tmp_path, ["localhost", "127.0.0.1", "192.168.1.20"])
    names = x509.load_pem_x509_certificate(cert.read_bytes()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert {str(a) for a in names.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "192.168.1.20"}
    first = cert.read_bytes()
    assert self_signed_certificate(tmp_path, ["localhost"])[0].read_bytes() == first
    assert self_signed_certificate(tmp_path, ["10.0.0.7"])[0].read_bytes() != first


def test_https_server_answers_over_tls(app):
    port = free_port()
    server = https_server(app, "127.0.0.1", port, ["127.0.0.1"])
    server.prepare()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        context = ssl.create_default_context(cafile=f"{app.config['TLS_FOLDER']}/cert.pem")
        status, page = wait_for(f"https://127.0.0.1:{port}/", context=context)
        assert status == 200 and "Take or choose a photo" in page
    finally:
        server.stop()


def test_an_unknown_set_profile_is_a_one_line_error(tmp_path):
    assert "no-such-set" in failed_start(tmp_path, "--profile", "no-such-set")


def test_a_bad_camera_file_is_a_one_line_error(tmp_path):
    (tmp_path / "camera.json").write_text('{"format": "exxit-set/1"}')
    assert "exxit-camera/1" in failed_start(tmp_path, "--camera", str(tmp_path / "camera.json"))


def test_the_served_app_is_never_in_debug_mode(monkeypatch):
    import waitress.server

    served = {}

    class NotServing:
        def run(self):
            pass

        def close(self):
            pass

    def create_server(app, **options):
        served.update(app=app, **options)
        return NotServing()

    monkeypatch.setattr(waitress.server, "create_server", create_server)
    main(["--port", "5099"])
    assert served["app"].debug is False and not served["app"].testing
    assert (served["host"], served["port"]) == ("127.0.0.1", 5099)
