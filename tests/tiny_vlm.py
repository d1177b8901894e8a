"""A tiny random-weight SmolVLM (Idefics3 family) built from configs, saved to a folder, for the tests and the
benchmark's --smoke run: one text layer and one vision layer of width 32, a word-level tokenizer made with
`tokenizers`, SmolVLM's own image and video processors and the SmolVLM chat layout. Nothing is downloaded.

`set_yes_no_head` rewrites the output layer so that the yes/no spellings carry most of the first token's mass
(a random model spreads it over the whole vocabulary, so every answer would abstain)."""
from __future__ import annotations

from pathlib import Path

SPECIAL = ["<pad>", "<unk>", "<|im_start|>", "<end_of_utterance>", "<image>", "<fake_token_around_image>",
           "<global-img>"] + [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
# every spelling of the answer words a real vocabulary has (word-level: one token each)
YES_SPELLINGS = ["yes", "Yes", "YES", "▁yes", "Ġyes"]
NO_SPELLINGS = ["no", "No", "NO", "▁No"]
WORDS = ["User", "Assistant", "System", ":", "?", ".", ",", "'", "-", "the", "a", "an", "is", "are", "there",
         "in", "this", "photo", "bird", "nest", "red", "green", "blue", "frog", "tree", "flower", "answer", "or",
         "first", "then", "dash", "and", "one", "short", "reason", "question", "ecologist", "searching", "for",
         "maybe", "perhaps", "unsure", "of", "on", "with", "leaf", "water", "sky", "it", "shows", "Describe",
         "sentence", "catalog", "says", "Question", "Answer", "Does", "Is", "Are"]


def tiny_tokenizer():
    """A word-level fast tokenizer whose vocabulary holds the special tokens, the yes/no spellings and a few
    words; anything else is <unk>."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIAL + YES_SPELLINGS + NO_SPELLINGS + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                  pre_tokenizers.Punctuation()])
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", pad_token="<pad>",
                                  bos_token="<|im_start|>", eos_token="<end_of_utterance>",
                                  additional_special_tokens=SPECIAL[2:])
    return tok


def build_tiny_smolvlm(folder: str | Path, *, seed: int = 0, image_side: int = 32, splitting: bool = True,
                       yes_no: bool = False, rows: tuple[str, ...] | None = None, size: str = "tiny") -> Path:
    """Write a tiny random SmolVLM (weights, config, processor) to `folder` and return it. Pictures are cut
    into tiles of `image_side` px (up to 2 x 2 when `splitting`) plus the global view; each tile is
    (image_side / 16)^2 / scale^2 image tokens. `yes_no` / `rows`: the output layer set by
    `calibrate_yes_no_head` / `set_yes_no_head`. size='256m': the layer counts and widths of SmolVLM-256M
    (30 text layers of 576, 12 vision layers of 768, 512 px tiles of 64 tokens) with random weights and the
    small vocabulary, for timing the real model's compute where its weights cannot be downloaded."""
    import torch
    import transformers
    from transformers import SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMProcessor
    from transformers.models.smolvlm.image_processing_smolvlm import SmolVLMImageProcessor
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE
    from transformers.models.smolvlm.video_processing_smolvlm import SmolVLMVideoProcessor

    transformers.utils.logging.disable_progress_bar()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = tiny_tokenizer()
    patch, scale = 16, 2
    text = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
            "num_key_value_heads": 2}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2}
    if size == "256m":
        image_side, scale = 512, 4
        text = {"hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9,
                "num_key_value_heads": 3}
        vision = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12}
    seq_len = (image_side // patch) ** 2 // scale ** 2
    config = SmolVLMConfig(
        text_config={"model_type": "llama", "vocab_size": len(tok), **text,
                     "max_position_embeddings": 8192, "pad_token_id": tok.pad_token_id},
        vision_config={**vision, "image_size": image_side, "patch_size": patch},
        scale_factor=scale, image_token_id=tok.convert_tokens_to_ids("<image>"), pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    model = SmolVLMForConditionalGeneration(config).eval()
    images = SmolVLMImageProcessor(size={"longest_edge": image_side * (2 if splitting else 1)},
                                   max_image_size={"longest_edge": image_side}, do_image_splitting=splitting)
    videos = SmolVLMVideoProcessor(size={"longest_edge": image_side}, max_image_size={"longest_edge": image_side})
    processor = SmolVLMProcessor(image_processor=images, tokenizer=tok, video_processor=videos,
                                 image_seq_len=seq_len, chat_template=DEFAULT_CHAT_TEMPLATE)
    if rows:
        set_yes_no_head(model, tok, rows=rows)
    elif yes_no:
        calibrate_yes_no_head(model, processor)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def sample_photos(n: int = 6):
    """Pictures of different colours and shapes (portrait, landscape, square: different padded sides)."""
    from PIL import Image

    sizes = [(64, 40), (40, 64), (50, 50), (90, 30), (33, 77), (48, 64)]
    return [Image.new("RGB", sizes[i % len(sizes)], (40 * i % 256, 200 - 30 * i % 200, 90 + 25 * i % 160))
            for i in range(n)]


SAMPLE_QUESTIONS = ("Is there a bird in this photo?", "Is the frog green?", "Is it in water?")


def calibrate_yes_no_head(model, processor, *, spread: float = 3.0, lift: float = 8.0) -> None:
    """Set the output layer so that yes and no carry most of the first token's mass AND the answer changes
    with the photo and the question: the judge's prompts for sample photos and questions are run once, and
    with h the final hidden state at the last position, m its mean and w its most varying direction, the yes
    rows read g*w + lift*m/|m|^2 and the no rows g*(w.m/|m|^2)*m + lift*m/|m|^2: both answer words get about
    `lift` logits over the rest, and their difference g*w.(h - m) is centred on these prompts."""
    import torch

    from core.backends.base import JudgeRequest
    from core.prompts import judge as prompts

    tok = processor.tokenizer
    seen = []
    head = model.get_output_embeddings()
    hook = head.register_forward_pre_hook(lambda mod, args: seen.append(args[0][:, -1].detach().clone()))
    try:
        for image in sample_photos():
            for q in SAMPLE_QUESTIONS:
                request = JudgeRequest(image=image, question=q, query="a green frog")
                messages = [{"role": "system", "content": [{"type": "text", "text": prompts.SYSTEM}]},
                            {"role": "user", "content": [{"type": "image"},
                                                         {"type": "text", "text": prompts.user_text(request)}]}]
                text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
                inputs = processor(text=[text], images=[[image]], return_tensors="pt", do_image_splitting=False)
                with torch.no_grad():
                    model(**inputs)
    finally:
        hook.remove()
    h = torch.cat(seen).double()
    m = h.mean(0)
    centred = h - m
    w = torch.linalg.svd(centred, full_matrices=False).Vh[0]  # the direction these prompts differ most along
    g = spread / float(centred.matmul(w).abs().mean())
    unit_m = m / float(m.dot(m))
    yes_row = g * w + lift * unit_m
    no_row = g * float(w.dot(m)) * unit_m + lift * unit_m
    with torch.no_grad():
        head.weight.mul_(0.01)
        for spelling in YES_SPELLINGS:
            head.weight[tok.convert_tokens_to_ids(spelling)] = yes_row.to(head.weight.dtype)
        for spelling in NO_SPELLINGS:
            head.weight[tok.convert_tokens_to_ids(spelling)] = no_row.to(head.weight.dtype)


def set_yes_no_head(model, tokenizer, *, yes: float = 1.0, no: float = 1.0, gain: float = 10.0,
                    rows: tuple[str, ...] | None = None) -> None:
    """Make the yes/no spellings carry most of the first token's mass. The final norm keeps one dimension
    of the hidden state (scaled by `gain`) and damps the rest; the output layer reads that dimension into the
    yes rows with weight +`yes` and into the no rows with -`no`, every other row almost nothing. So a
    position whose hidden state is positive along it answers yes, negative no, and the answer changes with
    the photo and the question. `rows`: other token strings to give the yes weight instead (abstention)."""
    import torch

    head = model.get_output_embeddings()
    norm = model.model.text_model.norm
    with torch.no_grad():
        norm.weight.fill_(0.05)
        norm.weight[0] = gain
        head.weight.mul_(0.01)
        if rows is not None:
            for spelling in YES_SPELLINGS + NO_SPELLINGS:
                head.weight[tokenizer.convert_tokens_to_ids(spelling), 0] = 0.0
            for word in rows:
                head.weight[tokenizer.convert_tokens_to_ids(word), 0] = yes
            return
        for spelling in YES_SPELLINGS:
            head.weight[tokenizer.convert_tokens_to_ids(spelling), 0] = yes
        for spelling in NO_SPELLINGS:
            head.weight[tokenizer.convert_tokens_to_ids(spelling), 0] = -no
