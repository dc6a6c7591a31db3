"""Render sample photos of EXXIT positions with exact ground truth (Blender's bpy, Cycles on the CPU).

    /work/bpyenv/bin/python tools/render/render.py --plan tools/render/sample_plan.json --out sample_images
    /work/bpyenv/bin/python tools/render/render.py --plan ... --out /tmp/more --only s001 s014 --samples 48
    /work/bpyenv/bin/python tools/render/render.py --plan ... --out DIR --threads 1 --part 1/2   # and --part 2/2 beside it

Each spec of the plan (see plan.py) becomes NAME.jpg and NAME.json (the truth; every field is
described in tools/render/README.md). Every random choice comes from the spec's seed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import photo  # noqa: E402
from plan import sized_profile  # noqa: E402

TRUTH_FORMAT = "exxit-sample/1"


def load_profile(edition):
    return json.loads((REPO / "vision" / "profiles" / f"{edition}.json").read_text())


def read_exr(path):
    """Linear RGB float array (H, W, 3), top row first, read through Blender's image loader."""
    import bpy
    img = bpy.data.images.load(str(path))
    w, h = img.size
    buf = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(buf)
    bpy.data.images.remove(img)
    return buf.reshape(h, w, 4)[::-1, :, :3].copy()


def dump_json(obj) -> str:
    """Indented JSON with every short innermost list or record kept on one line."""
    text = json.dumps(obj, indent=1)
    inner = re.compile(r"([\[{])\n\s*([^\[\]{}]*?)\n\s*([\]}])")

    def collapse(m):
        one = m.group(1) + re.sub(r"\n\s*", " ", m.group(2)) + m.group(3)
        return one if len(one) <= 110 else m.group(0)
    for _ in range(2):
        text = inner.sub(collapse, text)
    return text + "\n"


def render_one(spec, out_dir, settings):
    import scene
    spec = dict(spec)
    spec["profile"] = sized_profile(load_profile(spec["edition"]), spec)
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        exr = Path(tmp) / "render.exr"
        truth = scene.render_spec(spec, exr, settings)
        linear = read_exr(exr)
    if linear.shape[:2] != (settings["height"], settings["width"]):
        linear = photo.resize_linear(linear, settings["width"], settings["height"])
    render_s = time.time() - started
    rng = np.random.default_rng([spec["seed"], 7])
    image, develop = photo.develop(linear, rng, spec["light"])
    quality = photo.save_jpeg(image, out_dir / f"{spec['name']}.jpg", rng)
    develop["jpeg_quality"] = quality
    record = {
        "format": TRUTH_FORMAT,
        "name": spec["name"],
        "image": f"{spec['name']}.jpg",
        "position": spec["position"],
        "profile": spec["profile"],
        "camera": truth["camera"],
        "lattice": truth["lattice"],
        "pixels": truth["pixels"],
        "meta": {
            "tilt_deg": truth["camera"]["tilt_deg"],
            "tilt_band": spec["tilt_band"],
            "edition": spec["edition"],
            "light": spec["light"],
            "lights": truth["lights"],
            "table": spec["table"],
            "phase": spec["phase"],
            "features": spec.get("features", []),
            "source": spec.get("source"),
            "regrouped": spec.get("regrouped"),
            "distractor": truth["distractor"],
            "hand": truth["hand"],
            "seed": spec["seed"],
            "renderer": f"Blender {__import__('bpy').app.version_string} Cycles CPU, "
                        f"{settings['samples']} samples, OpenImageDenoise, rendered at "
                        f"{settings['render_scale']:g} of the photo size",
            "render_seconds": round(render_s, 1),
            "photo": develop,
        },
    }
    (out_dir / f"{spec['name']}.json").write_text(dump_json(record))
    return render_s


def plan_part(text: str) -> tuple[int, int]:
    """(K, N) from "K/N" (1 <= K <= N): the part of a plan one of N renderers takes (chosen_specs)."""
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise argparse.ArgumentTypeError(f"{text!r}: give K/N with 1 <= K <= N, e.g. 1/2")
    return int(match[1]), int(match[2])


def chosen_specs(specs: list, only=None, part=(1, 1)) -> list:
    """The specs to render: those whose names start with one of `only` (all without it), and of
    them every Nth from the Kth on for `part` (K, N), so that N renderers started with 1/N .. N/N
    share a plan, each on its own core, and together render every spec once."""
    if only:
        specs = [s for s in specs if any(s["name"].startswith(p) for p in only)]
    k, n = part
    return specs[k - 1::n]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render EXXIT sample photos with ground truth.")
    ap.add_argument("--plan", default=str(HERE / "sample_plan.json"), help="plan JSON (plan.py)")
    ap.add_argument("--out", default=str(REPO / "sample_images"))
    ap.add_argument("--only", nargs="*", help="names (or name prefixes) of specs to render")
    ap.add_argument("--part", type=plan_part, default=(1, 1), metavar="K/N",
                    help="render only every Nth spec from the Kth on (N renderers, one per core, share a plan)")
    ap.add_argument("--skip-existing", action="store_true", help="skip specs whose JPEG exists")
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--render-scale", type=float, default=0.75,
                    help="render at this fraction of the photo size, then scale up")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=1200)
    ap.add_argument("--keep-exr", metavar="DIR", help="keep the linear renders (NAME.exr) here")
    ap.add_argument("--threads", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    args = ap.parse_args(argv)
    try:
        specs = json.loads(Path(args.plan).read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"render.py: cannot read plan {args.plan}: {exc}")
    specs = chosen_specs(specs, args.only, args.part)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {"samples": args.samples, "width": args.width, "height": args.height,
                "threads": args.threads, "render_scale": args.render_scale, "exr_dir": args.keep_exr}
    times = []
    for spec in specs:
        if args.skip_existing and (out / f"{spec['name']}.jpg").exists():
            continue
        seconds = render_one(spec, out, settings)
        times.append(seconds)
        print(f"{spec['name']}: {seconds:.1f} s", flush=True)
    if times:
        print(f"{len(times)} images, median {np.median(times):.1f} s per image")


if __name__ == "__main__":
    main()
