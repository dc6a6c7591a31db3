"""Write sample_images/README.md: what the sample set holds, from the truth files (no bpy).

    .venv/bin/python tools/render/catalogue.py sample_images
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

FIELDS = ("tilt_band", "edition", "light", "table", "phase")

HEADER = """# Sample images

Rendered table photos of EXXIT positions with exact ground truth, made by `tools/render/` (Blender
Cycles; see `tools/render/README.md` for how, and for every field of the truth files). Each
`NAME.jpg` (1600×1200, under 500 KB) has `NAME.json` beside it: the position (`exxit-position/1`),
the set profile, the camera (K, R, t, tilt, azimuth, distance), the pixel centre of every tile and
stack top, and `meta` (tilt, edition, light, table, phase, ...).

Regenerate (about {seconds:.0f} s per image on the 2-core machine):

```sh
nice -n 10 /work/bpyenv/bin/python tools/render/render.py --plan tools/render/sample_plan.json --out sample_images
.venv/bin/python tools/render/catalogue.py sample_images
```

Measure the vision pipeline on them: `.venv/bin/python bench/vision_accuracy.py sample_images`.
Draw a truth on its photo: `.venv/bin/python tools/render/overlay.py sample_images/NAME.json out.png`.
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    truths = []
    for path in sorted(folder.glob("*.json")):
        t = json.loads(path.read_text())
        if t.get("format") == "exxit-sample/1":
            truths.append(t)
    seconds = sorted(t["meta"].get("render_seconds", 0) for t in truths)
    median = seconds[len(seconds) // 2] if seconds else 0
    lines = [HEADER.format(seconds=median)]
    lines.append(f"## {len(truths)} images per stratum\n")
    for field in FIELDS:
        counts = Counter(t["meta"][field] for t in truths)
        lines.append(f"- **{field}**: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    pairs = Counter((t["meta"]["tilt_band"], t["meta"]["edition"]) for t in truths)
    editions = sorted({e for _, e in pairs})
    lines.append("\n| tilt band | " + " | ".join(editions) + " |")
    lines.append("| --- |" + " --- |" * len(editions))
    for band in sorted({b for b, _ in pairs}, key=lambda b: int(b.split("-")[0])):
        lines.append(f"| {band} | " + " | ".join(str(pairs[(band, e)]) for e in editions) + " |")
    features = Counter(f for t in truths for f in t["meta"].get("features", []))
    lines.append("\nPositions showing: " + ", ".join(f"{k} {v}" for k, v in sorted(features.items())) + ".")
    lines.append("\n## The images\n")
    lines.append("| image | phase | edition | tilt° | light | table | tiles | stacks | tallest | "
                 "features | source | distractor | KB |")
    lines.append("| --- |" + " --- |" * 12)
    for t in truths:
        m, pos = t["meta"], t["position"]
        heights = [len(s["discs"]) for s in pos["stacks"]]
        size = (folder / t["image"]).stat().st_size // 1000 if (folder / t["image"]).exists() else 0
        lines.append(f"| {t['image']} | {m['phase']} | {m['edition']} | {m['tilt_deg']:.0f} | {m['light']} | "
                     f"{m['table']} | {len(pos['tiles'])}/{pos.get('total_tiles', 39)} | {len(heights)} | "
                     f"{max(heights) if heights else 0} | {', '.join(m.get('features', [])) or '-'} | "
                     f"{m.get('source') or '-'} | {m.get('distractor') or '-'} | {size} |")
    (folder / "README.md").write_text("\n".join(lines) + "\n")
    print(f"{folder / 'README.md'}: {len(truths)} images")


if __name__ == "__main__":
    main()
