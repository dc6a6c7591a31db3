"""`python -m webapp`: serve the web app with a production WSGI server (never debug mode).

Plain HTTP is served by waitress; ``--https`` serves TLS with cheroot and a self-signed
certificate, because phone browsers allow the camera only on secure pages.
"""

import argparse
import socket
import sys
from pathlib import Path

from . import create_app

THREADS = 8


def local_addresses():
    """This machine's IPv4 addresses, for the URLs a phone on the same network can open."""
    found = set()
    try:
        found |= {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    except OSError:
        pass
    try:  # Linux lists every local address in its routing trie
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
        found |= {above.split()[-1] for above, line in zip(lines, lines[1:]) if "/32 host LOCAL" in line}
    except OSError:
        pass
    return sorted(a for a in found if not a.startswith("127."))


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m webapp", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (0.0.0.0 serves phones on the local network)")
    parser.add_argument("--port", type=int, default=5000, help="port (default 5000)")
    parser.add_argument("--https", action="store_true",
                        help="serve HTTPS with a self-signed certificate (needed for the camera)")
    parser.add_argument("--profile", metavar="SET",
                        help="set profile: a shipped edition (jactalea-red-black, silver-red, "
                             "black-white) or a SET.json from `python -m calibration profile`")
    parser.add_argument("--camera", metavar="CAMERA.json",
                        help="the camera's lens, from `python -m calibration camera`: every photo is "
                             "undistorted before it is read (a webcam's or a wide lens's curved edges)")
    return parser.parse_args(argv)


def https_server(app, host, port, hosts):
    """A cheroot server speaking TLS with a self-signed certificate naming ``hosts``."""
    from cheroot import wsgi
    from cheroot.ssl.builtin import BuiltinSSLAdapter

    from .tls import self_signed_certificate

    cert, key = self_signed_certificate(app.config["TLS_FOLDER"], hosts)
    server = wsgi.Server((host, port), app, numthreads=THREADS)
    server.max_request_body_size = app.config["MAX_CONTENT_LENGTH"] + 1024 * 1024
    server.ssl_adapter = BuiltinSSLAdapter(str(cert), str(key))
    return server


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    app = create_app()
    app.debug = False
    if args.profile is not None or args.camera is not None:
        import vision

        try:
            if args.profile is not None:
                app.config["VISION_PROFILE"] = vision.load_profile(args.profile)
            if args.camera is not None:
                app.config["VISION_CAMERA"] = vision.load_lens(args.camera)
        except vision.VisionError as exc:
            sys.exit(f"python -m webapp: {exc}")
    scheme = "https" if args.https else "http"
    hosts = ["localhost", "127.0.0.1"]
    if args.host in ("0.0.0.0", "::"):
        hosts += local_addresses()
    elif args.host not in hosts:
        hosts.append(args.host)
    try:
        if args.https:
            server = https_server(app, args.host, args.port, hosts)
            server.prepare()
            serve, stop = server.serve, server.stop
        else:
            import waitress.server

            server = waitress.server.create_server(app, host=args.host, port=args.port,
                                                   threads=THREADS)
            serve, stop = server.run, server.close
    except OSError as exc:
        sys.exit(f"python -m webapp: cannot serve on {args.host}:{args.port}: "
                 f"{exc.strerror or exc}")
    # announced once listening, so that a busy port never shows an address that is not served
    for host in hosts:
        print(f"Exxit Referee: {scheme}://{host}:{args.port}/", flush=True)
    if args.host == "127.0.0.1":
        print("For phones on this network: --host 0.0.0.0 --https (the camera needs HTTPS).", flush=True)
    if args.https:
        print("The certificate is self-signed: accept the browser's warning once.", flush=True)
    try:
        serve()
    except KeyboardInterrupt:
        stop()


if __name__ == "__main__":
    main()
