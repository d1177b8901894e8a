"""What each model needs to run as its authors intend, as data: denoising steps, guidance, native picture
size, precision on a GPU, text context and weight variant, whether a small LLM's answers are held to the
request's own words, plus a caveat to show users; for vision-language models (kind 'vlm', read by the
in-process transformers judge and captioner) the prompt layout, whether pictures are cut into tiles, how many
photos go through one forward pass on the CPU and on a GPU, and how much of the first answer token's
probability must fall on yes or no for the judge to answer rather than abstain.

`model_facts(kind, name)` finds the first row of FACTS for that kind whose pattern occurs in the model name
(case-insensitive: 'stabilityai/sdxl-turbo', '/models/sdxl-turbo' and 'diffusers:stabilityai/sdxl-turbo' all
match 'sdxl-turbo'), else the kind's defaults. Rows are ordered most specific first. A row fills only what
it knows; the rest comes from the defaults. Backends read these facts instead of one setting for all models."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

TINY_LLM_NOTE = ("SmolLM2-135M is a very small model: its answers are often wrong or off-format and are checked, "
                 "with rule-based fallbacks")
# a text LLM with fewer parameters than this is 'tiny': the notice, and its questions held to the request's words
TINY_LLM_MAX_PARAMS = 1_000_000_000
# the capability floor of an answer judge (`eval --answers`): grading a free answer against reference answers
# needs a model that reads both and does not echo its prompt. SmolLM2-135M graded "white" against "pale
# yellow; cream" as 1.0 with the prompt's own words as its reason; the papers grade with GPT-4o-class models.
# A text LLM with fewer parameters than this is not a valid answer judge.
ANSWER_JUDGE_MIN_PARAMS = 7_000_000_000


@dataclass(frozen=True)
class ModelFacts:
    steps: int | None = None  # denoising steps the model is made for (generators)
    guidance: float | None = None  # classifier-free guidance scale; 0 turns it off (distilled models)
    native_size: int | None = None  # picture side in pixels the model was trained at
    precision: str | None = None  # on a GPU with dtype=auto: 'fp16', 'bf16' or 'fp32'
    context_tokens: int | None = None  # text context of an LLM or of a text encoder
    variant: str | None = None  # diffusers weight variant to fetch for half precision ('fp16')
    note: str = ""  # a caveat users should see when this model is in use
    # an LLM too small to stay on topic: its JSON answers are held by the grammar to the request's own words
    own_words: bool | None = None
    # whether the model can grade answers against reference answers (eval --answers): False below the capability
    # floor (ANSWER_JUDGE_MIN_PARAMS, or a family known to be too small), None when nothing says
    answer_judge: bool | None = None
    # vision-language models (kind 'vlm'): 'chat' = the processor's chat template with a system turn, the
    # photo, then the question; 'chat-no-system' = the same with the system text put in the user turn;
    # 'plain' = image tokens, BOS, the text and a newline (PaliGemma's prefix layout, no chat template)
    prompt_layout: str | None = None
    image_splitting: bool | None = None  # cut large pictures into tiles (Idefics3 family); None: the processor's
    batch_cpu: int | None = None  # photos per forward pass on the CPU
    batch_gpu: int | None = None  # photos per forward pass on a GPU
    min_answer_mass: float | None = None  # p(yes) + p(no) of the first token below this: the judge abstains
    matched: str = "default"  # the table row that matched (shown by `app.py doctor`)


_F = ModelFacts
DEFAULTS: dict[str, ModelFacts] = {
    "generator": _F(steps=25, guidance=7.5, native_size=512, precision="fp16"),
    "embedder": _F(native_size=224, precision="fp16", context_tokens=77),
    "llm": _F(context_tokens=4096),
    "judge": _F(),
    "captioner": _F(),
    # an unknown image-text-to-text model: its own chat template and processor settings, modest batches, and
    # an answer only when at least half of the first token's probability is on a spelling of yes or no
    "vlm": _F(precision="fp16", prompt_layout="chat", batch_cpu=4, batch_gpu=16, min_answer_mass=0.5),
}

# (kind, pattern, facts): sources are the model cards of each family.
FACTS: list[tuple[str, str, ModelFacts]] = [
    # distilled one-to-four-step models: no guidance, their own resolution
    ("generator", "sdxl-turbo", _F(steps=1, guidance=0.0, native_size=512, variant="fp16")),
    ("generator", "sd-turbo", _F(steps=1, guidance=0.0, native_size=512, variant="fp16")),
    ("generator", "flux.1-schnell", _F(steps=4, guidance=0.0, native_size=1024, precision="bf16")),
    ("generator", "flux.1-dev", _F(steps=28, guidance=3.5, native_size=1024, precision="bf16")),
    # classic latent diffusion
    ("generator", "stable-diffusion-xl", _F(steps=30, guidance=5.0, native_size=1024, variant="fp16")),
    ("generator", "sdxl", _F(steps=30, guidance=5.0, native_size=1024, variant="fp16")),
    ("generator", "stable-diffusion-2-1-base", _F(steps=25, guidance=7.5, native_size=512)),
    ("generator", "stable-diffusion-2-base", _F(steps=25, guidance=7.5, native_size=512)),
    ("generator", "stable-diffusion-2", _F(steps=25, guidance=7.5, native_size=768)),
    ("generator", "stable-diffusion-v1", _F(steps=25, guidance=7.5, native_size=512)),
    ("generator", "stable-diffusion-3", _F(steps=28, guidance=7.0, native_size=1024)),
    # open_clip embedders
    ("embedder", "bioclip", _F(native_size=224, context_tokens=77)),
    ("embedder", "-336", _F(native_size=336)),
    ("embedder", "-384", _F(native_size=384)),
    ("embedder", "siglip", _F(context_tokens=64, precision="bf16")),
    ("embedder", "vit-", _F(native_size=224, context_tokens=77)),
    # text LLMs
    ("llm", "135m", _F(context_tokens=8192, note=TINY_LLM_NOTE, own_words=True, answer_judge=False)),
    ("llm", "smollm", _F(context_tokens=8192, answer_judge=False)),  # 135M, 360M and 1.7B: all below the floor
    ("llm", "gpt-4.1-nano", _F(context_tokens=1_047_576)),
    ("llm", "gpt-4.1", _F(context_tokens=1_047_576, answer_judge=True)),
    ("llm", "gpt-4o-mini", _F(context_tokens=128_000)),
    ("llm", "gpt-4o", _F(context_tokens=128_000, answer_judge=True)),
    ("llm", "qwen2.5", _F(context_tokens=32_768)),
    ("llm", "llama-3", _F(context_tokens=8192)),
    # in-process vision-language judges and captioners (transformers image-text-to-text; 'smolvlm' covers SmolVLM2).
    # Also matched against a local folder's config model_type ('smolvlm', 'idefics3', 'qwen2_5_vl', 'paligemma') when
    # the name says nothing. SmolVLM: trained in bf16; without tiling a photo is one view at the processor's tile size
    # (512 px, 64 image tokens for the 256M/500M models) instead of up to 17 tiles, which a yes/no check does not need.
    ("vlm", "smolvlm", _F(precision="bf16", image_splitting=False, batch_cpu=4, batch_gpu=32)),
    ("vlm", "idefics3", _F(precision="bf16", image_splitting=False, batch_cpu=2, batch_gpu=8)),
    # Qwen2.5-VL: a photo is up to native_size^2 pixels (the image processor's max_pixels) in 28 px patches,
    # 256 image tokens at 448 px: smaller batches
    ("vlm", "qwen2.5-vl", _F(precision="bf16", native_size=448, batch_cpu=1, batch_gpu=8)),
    ("vlm", "qwen2_5_vl", _F(precision="bf16", native_size=448, batch_cpu=1, batch_gpu=8)),
    # PaliGemma 2: a prefix model without a chat template (its picture size is fixed by the checkpoint)
    ("vlm", "paligemma", _F(precision="bf16", prompt_layout="plain", batch_cpu=2, batch_gpu=16)),
]


def model_facts(kind: str, name: str) -> ModelFacts:
    """The facts for model `name` of backend `kind` ('generator', 'embedder', 'llm', 'judge', 'captioner',
    'vlm')."""
    base = DEFAULTS.get(kind, ModelFacts())
    lowered = (name or "").lower()
    for row_kind, pattern, facts in FACTS:
        if row_kind == kind and pattern in lowered:
            known = {f.name: getattr(facts, f.name) for f in fields(facts)
                     if getattr(facts, f.name) not in (None, "") and f.name != "matched"}
            return replace(base, **known, matched=pattern)
    return base


def count_text(n_params: int) -> str:
    """134515008 -> '134.5M', 7241732096 -> '7.2B'."""
    n = float(n_params)
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + unit
    return str(int(n))


def tiny_llm_note(name: str, n_params: int) -> str:
    return (f"{name} is a very small model ({count_text(n_params)} parameters): its answers are often wrong or "
            "off-format and are checked, with rule-based fallbacks")


def llm_facts(name: str, n_params: int | None = None) -> ModelFacts:
    """The facts of text LLM `name`; with its parameter count known (what the server or the GGUF file says),
    the count decides whether it is tiny, whatever the name says ('model.gguf' may be a 135M model)."""
    facts = model_facts("llm", name)
    if not n_params:
        return facts
    judge = n_params >= ANSWER_JUDGE_MIN_PARAMS
    if n_params < TINY_LLM_MAX_PARAMS:
        return replace(facts, note=tiny_llm_note(name or "the served model", n_params), own_words=True,
                       answer_judge=False,
                       matched=f"{count_text(n_params)} parameters (under {count_text(TINY_LLM_MAX_PARAMS)})")
    return replace(facts, note="", own_words=False, answer_judge=judge,
                   matched=f"{count_text(n_params)} parameters" + (f"; {facts.matched}" if facts.matched != "default"
                                                                  else ""))


class FactsCaveats:
    """What an LLM backend with `facts` (ModelFacts) tells its callers about itself: whether its questions are
    held to the request's words (a model too small to stay on topic; core.methods.llm_tasks) and the caveat
    line banners and notices show ('' for a capable model)."""

    facts: ModelFacts

    @property
    def is_tiny(self) -> bool:
        return bool(self.facts.note)

    @property
    def own_words(self) -> bool:
        return bool(self.facts.own_words)

    @property
    def notice(self) -> str:
        return self.facts.note
