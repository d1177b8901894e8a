"""Where torch backends run and in which precision, from the `device`, `dtype` and `threads` settings.

auto device: cuda if available, else mps (Apple GPUs), else cpu. auto dtype: float16 on a GPU, float32 on
the CPU (half precision on the CPU is slow and poorly supported). torch is imported only when called."""
from __future__ import annotations

from typing import Any

from core.contracts.errors import BackendError

_DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}


def import_torch(setting: str = "device") -> Any:
    """The torch module, or a BackendError saying how to install it."""
    try:
        import torch
    except ImportError:
        raise BackendError(f"PyTorch is not installed (needed by the '{setting}' backend)",
                           "pip install torch, or choose an offline backend") from None
    return torch


def choose_device(setting: str = "auto") -> str:
    """'cuda', 'mps' or 'cpu'. An explicit choice that this machine cannot honour is an error."""
    torch = import_torch()
    if setting == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    if setting == "cuda" and not torch.cuda.is_available():
        raise BackendError("device=cuda was chosen but no CUDA GPU is visible to PyTorch",
                           "set device to auto or cpu, or install a CUDA build of torch")
    if setting == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise BackendError("device=mps was chosen but MPS is not available",
                               "set device to auto or cpu")
    if setting not in ("cpu", "cuda", "mps"):
        raise BackendError(f"Unknown device {setting!r}", "set device to auto, cpu, cuda or mps")
    return setting


def choose_dtype(setting: str, device: str) -> Any:
    """The torch dtype: float16 on a GPU and float32 on the CPU when `setting` is 'auto'."""
    torch = import_torch()
    if setting == "auto":
        return torch.float16 if device in ("cuda", "mps") else torch.float32
    if setting not in _DTYPES:
        raise BackendError(f"Unknown dtype {setting!r}", "set dtype to auto, float32, float16 or bfloat16")
    return getattr(torch, _DTYPES[setting])


PRECISIONS = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def precision_for(setting: str, device: str, model_precision: str | None) -> str:
    """A precision name ('fp32', 'fp16', 'bf16') for libraries that take one (open_clip): float32 on the CPU
    with dtype=auto, else the model's own GPU precision (model_facts), else the one the setting names."""
    if setting == "auto":
        if device == "cpu":
            return "fp32"
        wanted = model_precision or "fp16"
        return "fp16" if device == "mps" and wanted == "bf16" else wanted
    if setting not in PRECISIONS:
        raise BackendError(f"Unknown dtype {setting!r}", "set dtype to auto, float32, float16 or bfloat16")
    return PRECISIONS[setting]


def dtype_of(precision: str) -> Any:
    """The torch dtype of inputs for a precision name."""
    torch = import_torch()
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def apply_threads(threads: int) -> None:
    """Limit torch's intra-op threads when the setting asks for it (0 leaves torch's default)."""
    if threads and threads > 0:
        torch = import_torch()
        torch.set_num_threads(int(threads))


def resolve(settings: Any) -> tuple[str, Any]:
    """(device, dtype) for these settings; also applies the thread limit."""
    device = choose_device(settings.device)
    dtype = choose_dtype(settings.dtype, device)
    apply_threads(settings.threads)
    return device, dtype
