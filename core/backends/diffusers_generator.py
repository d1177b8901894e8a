"""Text-to-image through a diffusers pipeline (generator='diffusers:MODEL_ID_OR_PATH').

The pipeline is loaded at the first picture (AutoPipelineForText2Image), in the dtype and on the device
chosen by torch_device; a local folder, or a model already in the Hugging Face cache, is loaded without
network. Steps, guidance, native size and weight variant come from the model's facts (model_facts.py:
SDXL-Turbo draws in 1 step without guidance at 512 px; SD 1.5 in 25 steps at guidance 7.5): a picture is
drawn at the model's native size and scaled to the size asked for. A seeded torch.Generator makes each
(prompt, seed, size) repeatable on the same device. Diffusers pipelines are not safe to call from two
threads (the scheduler keeps per-call state), so loads and calls run under one lock, and a failed load is
remembered: every later picture fails at once with the same error. Tests inject a tiny pipeline."""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from core.backends import hf_hub, torch_device
from core.backends.base import GeneratedImage, ReferenceImage
from core.backends.model_facts import model_facts
from core.backends.reference_collage import collage, instructions_text
from core.contracts.errors import BackendError

log = logging.getLogger(__name__)
INSTALL = "pip install diffusers transformers"
CPU_MAX_STEPS = 12  # at most this many on the CPU, where each step is slow
REFERENCE_STRENGTH = 0.75  # image-to-image: how far the picture may move from the collage of references
SIDE_MULTIPLE = 8  # latent diffusion models need sides divisible by the VAE's down-scaling
LOCAL_EXAMPLE = "generator=diffusers:/path/to/model"


def _dtype_keyword(version: str) -> str:
    """diffusers 0.42 renamed from_pretrained's torch_dtype to dtype (the old name still works, with a warning)."""
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return "torch_dtype"
    return "dtype" if (major, minor) >= (0, 42) else "torch_dtype"


def native_size_of(pipeline: Any) -> int | None:
    """The picture side a pipeline draws by default: its UNet's sample size times the VAE's scale factor."""
    unet = getattr(pipeline, "unet", None) or getattr(pipeline, "transformer", None)
    sample = getattr(getattr(unet, "config", None), "sample_size", None)
    scale = getattr(pipeline, "vae_scale_factor", None)
    if isinstance(sample, (list, tuple)):
        sample = sample[0]
    return int(sample) * int(scale) if isinstance(sample, int) and isinstance(scale, int) else None


class DiffusersGenerator:
    is_standin = False

    def __init__(self, spec: str, *, pipeline: Any = None, device: str = "cpu", dtype: Any = None,
                 num_inference_steps: int | None = None, guidance_scale: float | None = None,
                 native_size: int | None = None):
        if not spec:
            raise BackendError("generator='diffusers:' needs a model id or folder",
                               "e.g. generator=diffusers:/models/sd-turbo")
        self.spec = spec
        self.device = device
        self.dtype = dtype
        self.facts = model_facts("generator", spec)
        steps = num_inference_steps or self.facts.steps or 25
        self.num_inference_steps = min(steps, CPU_MAX_STEPS) if device == "cpu" and not num_inference_steps else steps
        self.guidance_scale = self.facts.guidance if guidance_scale is None else guidance_scale
        # a known model's size from its facts; any other model's from its own config once loaded
        self.native_size = native_size or (self.facts.native_size if self.facts.matched != "default" else None)
        self.model_id = f"diffusers:{spec}"
        self._lock = threading.RLock()
        self._load_error: BackendError | None = None
        self._pipeline = pipeline
        if pipeline is not None:
            self._prepare(pipeline)

    @classmethod
    def from_settings(cls, settings: Any, spec: str) -> "DiffusersGenerator":
        if spec == "diffusers:":  # the registry passes the bare prefix through unchanged
            spec = ""
        if not spec:
            cls("")  # raises the error that names the setting
        device, _ = torch_device.resolve(settings)
        precision = torch_device.precision_for(settings.dtype, device,
                                               model_facts("generator", spec).precision)
        return cls(spec, device=device, dtype=torch_device.dtype_of(precision))

    def _prepare(self, pipeline: Any) -> None:
        if self.native_size is None:
            self.native_size = native_size_of(pipeline) or model_facts("generator", "").native_size
        pipeline.to(self.device)
        if hasattr(pipeline, "set_progress_bar_config"):
            pipeline.set_progress_bar_config(disable=True)  # library code never prints

    @property
    def pipeline(self) -> Any:
        """The text-to-image pipeline, loaded on first use; a failed load raises the same error from then on."""
        with self._lock:
            if self._pipeline is None:
                if self._load_error is not None:
                    raise BackendError(self._load_error.message, self._load_error.hint)
                try:
                    self._pipeline = self._load()
                except BackendError as exc:
                    log.exception("loading the diffusers model %r failed; not retried in this process", self.spec)
                    self._load_error = exc
                    raise
            return self._pipeline

    def _load(self) -> Any:
        try:
            import diffusers
        except ImportError:
            raise BackendError("diffusers is not installed (needed by generator='diffusers:...')",
                               f"{INSTALL}, or set generator to 'fieldguide' or 'standin'") from None
        folder = Path(self.spec).expanduser()
        if not folder.exists():  # a hub id: the cached copy, a download, or an error within seconds
            cached = hf_hub.require(self.spec, "generator", LOCAL_EXAMPLE)
            folder = cached if cached is not None else folder
        kwargs: dict[str, Any] = {"local_files_only": True} if folder.exists() else {}
        if self.dtype is not None:
            kwargs[_dtype_keyword(diffusers.__version__)] = self.dtype
        half = self.dtype is not None and str(self.dtype).endswith("float16") and self.device != "cpu"
        source = str(folder) if folder.exists() else self.spec
        try:
            try:
                pipeline = diffusers.AutoPipelineForText2Image.from_pretrained(
                    source, **kwargs, **({"variant": self.facts.variant} if half and self.facts.variant else {}))
            except (OSError, ValueError):
                if not (half and self.facts.variant):
                    raise
                log.warning("%s has no %s weight files; loading the default ones", self.spec, self.facts.variant)
                pipeline = diffusers.AutoPipelineForText2Image.from_pretrained(source, **kwargs)
        except Exception as exc:
            raise BackendError(f"Could not load the diffusers model {self.spec!r} "
                               f"({type(exc).__name__}: {str(exc)[:200]})",
                               "download it once while online (it is cached) or point generator at a "
                               f"local folder: {LOCAL_EXAMPLE}") from None
        self._prepare(pipeline)
        return pipeline

    def draw_side(self, size: int) -> int:
        """The side the model draws at: its native size (never below the size asked for), a multiple of 8."""
        side = max(int(size), int(self.native_size or 0))
        return max(SIDE_MULTIPLE, -(-side // SIDE_MULTIPLE) * SIDE_MULTIPLE)

    def generate(self, prompt: str, *, seed: int, size: int = 224) -> GeneratedImage:
        import torch

        side = self.draw_side(size)
        generator_device = "cpu" if self.device == "mps" else self.device
        kwargs: dict[str, Any] = {"num_inference_steps": self.num_inference_steps}
        if self.guidance_scale is not None:
            kwargs["guidance_scale"] = float(self.guidance_scale)
        with self._lock:
            pipeline = self.pipeline
            generator = torch.Generator(generator_device).manual_seed(int(seed))
            try:
                with torch.inference_mode():
                    result = pipeline(prompt, height=side, width=side, generator=generator, output_type="pil",
                                      **kwargs)
            except Exception as exc:
                raise BackendError(f"The diffusers pipeline failed: {type(exc).__name__}: {str(exc)[:200]}",
                                   "check the model, the image size and free GPU memory") from None
        image = result.images[0].convert("RGB")
        if image.size != (size, size):
            image = image.resize((size, size), Image.LANCZOS)
        return GeneratedImage(image=image, prompt=prompt, seed=seed, model_id=self.model_id)

    def image_to_image(self) -> Any:
        """The image-to-image pipeline sharing the text-to-image one's weights (loaded on first use)."""
        with self._lock:
            if getattr(self, "_img2img", None) is None:
                import diffusers

                try:
                    self._img2img = diffusers.AutoPipelineForImage2Image.from_pipe(self.pipeline)
                except BackendError:
                    raise
                except Exception as exc:
                    raise BackendError(f"The diffusers model {self.spec!r} has no image-to-image pipeline "
                                       f"({type(exc).__name__}: {str(exc)[:200]})",
                                       "use a model with an image-to-image variant (e.g. stabilityai/sdxl-turbo)"
                                       ) from None
            return self._img2img

    def generate_from_references(self, prompt: str, references: Sequence[ReferenceImage], *, seed: int,
                                 size: int = 224) -> GeneratedImage:
        """Image-to-image from a collage of the references, guided by the prompt and each picture's
        instruction (diffusers pipelines read one text and one starting picture)."""
        import torch

        side = self.draw_side(size)
        start = collage(references, side)
        text = instructions_text(prompt, references)
        # image-to-image runs strength x steps denoising steps: at least one
        kwargs: dict[str, Any] = {"num_inference_steps": max(self.num_inference_steps,
                                                             int(1 / REFERENCE_STRENGTH) + 1)}
        if self.guidance_scale is not None:
            kwargs["guidance_scale"] = float(self.guidance_scale)
        with self._lock:
            pipeline = self.image_to_image()
            generator = torch.Generator("cpu" if self.device == "mps" else self.device).manual_seed(int(seed))
            try:
                with torch.inference_mode():
                    result = pipeline(prompt=text, image=start, strength=REFERENCE_STRENGTH, generator=generator,
                                      output_type="pil", **kwargs)
            except Exception as exc:
                raise BackendError(f"The diffusers image-to-image pipeline failed: {type(exc).__name__}: "
                                   f"{str(exc)[:200]}", "check the model, the image size and free GPU memory") from None
        image = result.images[0].convert("RGB")
        if image.size != (size, size):
            image = image.resize((size, size), Image.LANCZOS)
        return GeneratedImage(image=image, prompt=text, seed=seed, model_id=self.model_id)
