"""Reference-guided generation through a real (tiny, randomly initialised) diffusers pipeline: the
image-to-image pipeline built from the text-to-image one's weights composes from a collage of the references."""
import numpy as np
from PIL import Image

from core.backends.base import ReferenceImage
from tests.integration.test_real_backends import tiny_pipeline  # noqa: F401  (the shared tiny pipeline fixture)


def test_diffusers_image_to_image_from_references(tiny_pipeline):
    from core.backends.diffusers_generator import DiffusersGenerator

    gen = DiffusersGenerator("tiny-test-pipeline", pipeline=tiny_pipeline, device="cpu", num_inference_steps=2)
    refs = [ReferenceImage(Image.new("RGB", (16, 16), (200, 30, 30)), "use only a red crest", 1),
            ReferenceImage(Image.new("RGB", (16, 16), (30, 30, 200)), "use only a blue belly", 2)]
    a = gen.generate_from_references("a bird", refs, seed=1, size=32)
    b = gen.generate_from_references("a bird", refs, seed=1, size=32)
    assert a.image.size == (32, 32) and a.image.mode == "RGB" and np.array_equal(np.asarray(a.image),
                                                                                 np.asarray(b.image))
    assert "Reference picture 2: use only a blue belly" in a.prompt and not gen.is_standin
    assert type(gen.image_to_image()).__name__.endswith("Img2ImgPipeline")
    other = gen.generate_from_references("a bird", refs[:1], seed=1, size=32)  # other references, other picture
    assert not np.array_equal(np.asarray(a.image), np.asarray(other.image))
