"""Benchmark: the memory and time one large example photo costs. A 79-megapixel JPEG (the kind of upload the
issue measured at 800 MB) is read (a) the bare way, PIL decoding it in full to RGB, and (b) the way EcoLens
reads every example photo (core.imageio.example_photo: pixel count from the header, JPEG decoded reduced with
PIL's draft mode, at most 1024 px). Each runs in a fresh process; the figure is that process's peak resident
memory (VmHWM) and the decode time. Goal: (b) peak <= 1/8 of (a).

    python bench/upload_memory.py
    python bench/upload_memory.py --smoke   # a 12-megapixel JPEG; goal not judged
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE = ("from PIL import Image; Image.MAX_IMAGE_PIXELS = None",
        'image = Image.open(PATH).convert("RGB")')
ECOLENS = ("from core.imageio import example_photo", "image = example_photo(PATH, max_mb=20)")


def measure(code: tuple[str, str], path: Path) -> tuple[float, float, tuple[int, int]]:
    """(peak MB, seconds, size) of decoding `path` with `code` (imports, decode) in a fresh process; the time
    leaves the imports out."""
    setup, work = code
    script = textwrap.dedent(f"""
        import sys, time
        PATH = {str(path)!r}
        {setup}
        t0 = time.perf_counter()
        {work}
        took = time.perf_counter() - t0
        peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
        print(peak / 1024, took, image.size[0], image.size[1])
        """)
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1]), (int(out[2]), int(out[3]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run (a 4000x3000 JPEG) that checks the bench works; the goal is not judged")
    args = ap.parse_args()
    width, height = (4000, 3000) if args.smoke else (9000, 8800)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jpg"
        subprocess.run([sys.executable, "-c", "from PIL import Image; import numpy as np; "
                        "a = np.random.default_rng(0).integers(0, 255, (110, 90, 3), dtype=np.uint8); "
                        f"Image.fromarray(a).resize(({width}, {height})).save({str(path)!r}, quality=70)"],
                       check=True)
        mb = path.stat().st_size / 1e6
        bare = measure(BARE, path)
        ours = measure(ECOLENS, path)
    print(f"a {mb:.1f} MB JPEG of {width}x{height} = {width * height / 1e6:.1f} megapixels")
    print(f"bare PIL full decode to RGB : peak {bare[0]:7.0f} MB, {bare[1]:.2f} s, {bare[2][0]}x{bare[2][1]}")
    print(f"EcoLens example_photo       : peak {ours[0]:7.0f} MB, {ours[1]:.2f} s, {ours[2][0]}x{ours[2][1]}")
    ratio = ours[0] / bare[0]
    print(f"peak memory ratio {ratio:.3f} (goal <= 0.125); time ratio {ours[1] / bare[1]:.3f}")
    if args.smoke:  # at this size the interpreter's own memory is most of both peaks
        print("smoke run: the goal is not judged at this size")
        return 0
    return 0 if ratio <= 0.125 else 1


if __name__ == "__main__":
    sys.exit(main())
