"""Reference pictures side by side: the starting picture for image-to-image generation and the offline
generators' composition (Cross-modal RAG's reference-guided generation)."""
from __future__ import annotations

import math
from typing import Sequence

from PIL import Image

from core.backends.base import ReferenceImage


def collage(references: Sequence[ReferenceImage], size: int) -> Image.Image:
    """A size x size RGB picture with the references in a near-square grid, each scaled to fill its cell."""
    canvas = Image.new("RGB", (size, size), (127, 127, 127))
    if not references:
        return canvas
    cols = math.ceil(math.sqrt(len(references)))
    rows = math.ceil(len(references) / cols)
    cw, ch = size // cols, size // rows
    for i, ref in enumerate(references):
        tile = ref.image.convert("RGB").resize((max(1, cw), max(1, ch)), Image.BILINEAR)
        canvas.paste(tile, ((i % cols) * cw, (i // cols) * ch))
    return canvas


def instructions_text(prompt: str, references: Sequence[ReferenceImage]) -> str:
    """The request followed by each reference picture's instruction, numbered as the pictures are given."""
    lines = [prompt.strip()]
    lines += [f"Reference picture {i}: {ref.instruction.strip()}" for i, ref in enumerate(references, start=1)]
    return "\n".join(lines)
