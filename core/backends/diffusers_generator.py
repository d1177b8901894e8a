"""Text-to-image through a diffusers pipeline (generator='diffusers:MODEL_ID_OR_PATH').

The pipeline is loaded at the first picture (AutoPipelineForText2Image), in the dtype and on the device
chosen by torch_device; a local folder is loaded with local_files_only. A seeded torch.Generator makes
each (prompt, seed, size) repeatable on the same device. Tests inject a tiny pipeline through `pipeline`."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from core.backends import torch_device
from core.backends.base import GeneratedImage, ReferenceImage
from core.backends.reference_collage import collage, instructions_text
from core.errors import BackendError

INSTALL = "pip install diffusers transformers"
GPU_STEPS = 25
CPU_STEPS = 12  # fewer on the CPU, where each step is slow
REFERENCE_STRENGTH = 0.75  # image-to-image: how far the picture may move from the collage of references
SIDE_MULTIPLE = 8  # latent diffusion models need sides divisible by the VAE's down-scaling


def _dtype_keyword(version: str) -> str:
    """diffusers 0.42 renamed from_pretrained's torch_dtype to dtype (the old name still works, with a warning)."""
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return "torch_dtype"
    return "dtype" if (major, minor) >= (0, 42) else "torch_dtype"


class DiffusersGenerator:
    is_standin = False

    def __init__(self, spec: str, *, pipeline: Any = None, device: str = "cpu", dtype: Any = None,
                 num_inference_steps: int | None = None):
        if not spec:
            raise BackendError("generator='diffusers:' needs a model id or folder",
                               "e.g. generator=diffusers:/models/sd-turbo")
        self.spec = spec
        self.device = device
        self.dtype = dtype
        self.num_inference_steps = num_inference_steps or (CPU_STEPS if device == "cpu" else GPU_STEPS)
        self.model_id = f"diffusers:{spec}"
        self._pipeline = pipeline
        if pipeline is not None:
            self._prepare(pipeline)

    @classmethod
    def from_settings(cls, settings: Any, spec: str) -> "DiffusersGenerator":
        if spec == "diffusers:":  # the registry passes the bare prefix through unchanged
            spec = ""
        if not spec:
            cls("")  # raises the error that names the setting
        device, dtype = torch_device.resolve(settings)
        return cls(spec, device=device, dtype=dtype)

    def _prepare(self, pipeline: Any) -> None:
        pipeline.to(self.device)
        if hasattr(pipeline, "set_progress_bar_config"):
            pipeline.set_progress_bar_config(disable=True)  # library code never prints

    @property
    def pipeline(self) -> Any:
        """The text-to-image pipeline, loaded on first use."""
        if self._pipeline is None:
            try:
                import diffusers
            except ImportError:
                raise BackendError("diffusers is not installed (needed by generator='diffusers:...')",
                                   f"{INSTALL}, or set generator to 'fieldguide' or 'standin'") from None
            local = Path(self.spec).expanduser().exists()
            kwargs: dict[str, Any] = {"local_files_only": True} if local else {}
            if self.dtype is not None:
                kwargs[_dtype_keyword(diffusers.__version__)] = self.dtype
            source = str(Path(self.spec).expanduser()) if local else self.spec
            try:
                pipeline = diffusers.AutoPipelineForText2Image.from_pretrained(source, **kwargs)
            except Exception as exc:
                raise BackendError(f"Could not load the diffusers model {self.spec!r} "
                                   f"({type(exc).__name__}: {str(exc)[:200]})",
                                   "download it once while online (it is cached) or point generator at a "
                                   "local folder: generator=diffusers:/path/to/model") from None
            self._prepare(pipeline)
            self._pipeline = pipeline
        return self._pipeline

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        import torch

        pipeline = self.pipeline
        side = max(SIDE_MULTIPLE, -(-int(size) // SIDE_MULTIPLE) * SIDE_MULTIPLE)
        generator_device = "cpu" if self.device == "mps" else self.device
        generator = torch.Generator(generator_device).manual_seed(int(seed))
        try:
            with torch.inference_mode():
                result = pipeline(prompt, height=side, width=side, num_inference_steps=self.num_inference_steps,
                                  generator=generator, output_type="pil")
        except Exception as exc:
            raise BackendError(f"The diffusers pipeline failed: {type(exc).__name__}: {str(exc)[:200]}",
                               "check the model, the image size and free GPU memory") from None
        image = result.images[0].convert("RGB")
        if image.size != (size, size):
            image = image.resize((size, size), Image.LANCZOS)
        return GeneratedImage(image=image, prompt=prompt, seed=seed, model_id=self.model_id)

    def image_to_image(self) -> Any:
        """The image-to-image pipeline sharing the text-to-image one's weights (loaded on first use)."""
        if getattr(self, "_img2img", None) is None:
            import diffusers

            try:
                self._img2img = diffusers.AutoPipelineForImage2Image.from_pipe(self.pipeline)
            except Exception as exc:
                raise BackendError(f"The diffusers model {self.spec!r} has no image-to-image pipeline "
                                   f"({type(exc).__name__}: {str(exc)[:200]})",
                                   "use a model with an image-to-image variant (e.g. stabilityai/sdxl-turbo)") from None
        return self._img2img

    def generate_from_references(self, prompt: str, references: Sequence[ReferenceImage], *, seed: int,
                                 size: int = 224) -> GeneratedImage:
        """Image-to-image from a collage of the references, guided by the prompt and each picture's
        instruction (diffusers pipelines read one text and one starting picture)."""
        import torch

        pipeline = self.image_to_image()
        side = max(SIDE_MULTIPLE, -(-int(size) // SIDE_MULTIPLE) * SIDE_MULTIPLE)
        start = collage(references, side)
        text = instructions_text(prompt, references)
        generator = torch.Generator("cpu" if self.device == "mps" else self.device).manual_seed(int(seed))
        steps = max(self.num_inference_steps, int(1 / REFERENCE_STRENGTH) + 1)  # at least one denoising step
        try:
            with torch.inference_mode():
                result = pipeline(prompt=text, image=start, strength=REFERENCE_STRENGTH, num_inference_steps=steps,
                                  generator=generator, output_type="pil")
        except Exception as exc:
            raise BackendError(f"The diffusers image-to-image pipeline failed: {type(exc).__name__}: "
                               f"{str(exc)[:200]}", "check the model, the image size and free GPU memory") from None
        image = result.images[0].convert("RGB")
        if image.size != (size, size):
            image = image.resize((size, size), Image.LANCZOS)
        return GeneratedImage(image=image, prompt=text, seed=seed, model_id=self.model_id)
