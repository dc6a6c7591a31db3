"""Web app load and latency benchmark: prints the figures recorded in BENCHMARKS.md ("Web app").

Starts the real server (`python -m webapp`, waitress) on a free port of 127.0.0.1, then measures
1. upload-to-result: a 1600×1200 photo uploaded through the start page in Chromium; the time from
   the start of the upload (an upper bound of "from its end": loopback transfer included) to the
   result page drawn (window.exxitTimings.uploadToDrawn), and the API round trip of
   POST /api/analyze for the same photo;
2. 16 concurrent uploads of sample photos to POST /api/analyze: every answer, no error, answers
   equal to those of one-at-a-time uploads, and the server's peak RSS (VmHWM);
3. correction-to-answer: corrections made in the browser on a result page until the updated answer
   is drawn (window.exxitTimings.corrections).

    .venv/bin/python bench/webapp_load.py [--photos sample_images] [--rounds 5] [--corrections 20]
"""

import argparse
import io
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CONCURRENT = 16


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port):
    server = subprocess.Popen([sys.executable, "-m", "webapp", "--port", str(port)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/openapi.json", timeout=2).read()
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    sys.exit("webapp_load: the server did not start")


def peak_rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def post_photo(base, data, name="photo.jpg"):
    """POST /api/analyze as multipart; return (status, JSON body, seconds)."""
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"{name}\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(f"{base}/api/analyze", data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            status, payload = response.status, json.load(response)
    except urllib.error.HTTPError as error:
        status, payload = error.code, json.load(error)
    return status, payload, time.perf_counter() - started


def answer_key(status, payload):
    """What must agree between uploads of one photo: the status, the tiles and stacks read and the
    analysis (vision's confidences may vary from run to run and are left out)."""
    if status != 200:
        return status, payload.get("code")
    position = payload["position"]
    tiles = sorted((t["q"], t["r"], t["colour"]) for t in position["tiles"])
    stacks = sorted((s["q"], s["r"], tuple(map(str, s["discs"]))) for s in position["stacks"])
    return status, json.dumps([tiles, stacks, payload["analysis"]], sort_keys=True)


def photo_1600x1200(photos):
    with Image.open(photos[0]) as image:
        image = image.convert("RGB").resize((1600, 1200), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def summary(values, unit="ms", scale=1000.0):
    values = sorted(v * scale for v in values)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return (f"median {statistics.median(values):.0f} {unit}, p95 {p95:.0f} {unit}, "
            f"max {values[-1]:.0f} {unit} (n={len(values)})")


def browser_figures(base, photo_path, rounds, corrections):
    from playwright.sync_api import sync_playwright

    upload_to_drawn, correction_ms = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        page.set_default_timeout(120_000)
        for _ in range(rounds):
            page.goto(base + "/")
            page.set_input_files("#photo-input", str(photo_path))
            page.wait_for_url("**/a/*")
            page.wait_for_selector("body[data-ready='1']")
            upload_to_drawn.append(page.evaluate("window.exxitTimings.uploadToDrawn") / 1000)
        # corrections: flip the top disc of a stack back and forth, or cycle a tile
        stack = page.locator("#diagram .stack").first
        if stack.count():
            stack.click()
            target = "#editor [data-disc]"
        else:
            page.locator("#diagram polygon.tile").first.click()
            target = "#editor [data-tile='black']"
        for i in range(corrections):
            page.locator(target).first.click()
            page.wait_for_selector(f"body[data-updates='{i + 1}']")
        correction_ms = [t / 1000 for t in page.evaluate("window.exxitTimings.corrections")]
        browser.close()
    return upload_to_drawn, correction_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", default=str(REPO / "sample_images"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corrections", type=int, default=20)
    args = parser.parse_args()
    photos = sorted(Path(args.photos).glob("*.jpg"))
    if not photos:
        sys.exit(f"webapp_load: no .jpg photos in {args.photos}")

    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        big = photo_1600x1200(photos)
        api_times = [post_photo(base, big)[2] for _ in range(args.rounds)]
        with tempfile.TemporaryDirectory() as tmp:
            big_path = Path(tmp) / "photo_1600x1200.jpg"
            big_path.write_bytes(big)
            upload_to_drawn, correction_times = browser_figures(base, big_path, args.rounds,
                                                                args.corrections)

        batch = [photos[i % len(photos)] for i in range(CONCURRENT)]
        sequential = {p: answer_key(*post_photo(base, p.read_bytes(), p.name)[:2]) for p in set(batch)}
        rss_before = peak_rss_mb(server.pid)
        started = time.perf_counter()
        with ThreadPoolExecutor(CONCURRENT) as pool:
            results = list(pool.map(lambda p: post_photo(base, p.read_bytes(), p.name), batch))
        wall = time.perf_counter() - started
        rss_peak = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)

    statuses = [status for status, _, _ in results]
    codes = [body.get("code", "ok") for _, body, _ in results]
    same = sum(answer_key(s, b) == sequential[p] for p, (s, b, _) in zip(batch, results))
    errors = sum(status >= 500 or status in (400, 413) for status in statuses)
    print("machine: 2 cores, 24 GiB; server: python -m webapp (waitress, 8 threads, 2 photos read at once)")
    print(f"upload start to result drawn (1600x1200, browser): {summary(upload_to_drawn)}")
    print(f"POST /api/analyze round trip (1600x1200):     {summary(api_times)}")
    print(f"{CONCURRENT} concurrent uploads of {len(set(batch))} sample photos: wall {wall:.1f} s, "
          f"per request {summary([t for _, _, t in results], 's', 1)}")
    print(f"  statuses {dict((s, statuses.count(s)) for s in sorted(set(statuses)))} "
          f"({', '.join(f'{c} {codes.count(c)}' for c in sorted(set(codes)))}), "
          f"server errors {errors}, answers equal to one-at-a-time uploads: {same}/{CONCURRENT}")
    print(f"  server peak RSS: {rss_before:.0f} MB before the burst, {rss_peak:.0f} MB after")
    print(f"correction to updated answer (browser): {summary(correction_times)}")


if __name__ == "__main__":
    main()
