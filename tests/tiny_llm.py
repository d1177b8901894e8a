"""A tiny random-weight Llama chat model built in the test (nothing downloaded): a byte-level BPE tokenizer
trained here on a few sentences and JSON replies (so it can spell any text, JSON included), SmolLM2's
ChatML-style chat layout written as a template here, and one decoder layer of width 32."""
from __future__ import annotations

from pathlib import Path

import pytest

# ChatML turns, as SmolLM2 and Qwen2.5 lay them out (written here, not copied from a model repository)
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
SAMPLES = ['{"questions": ["Is there a heron in the photo?", "Is it eating a fish?"]}',
           '{"description": "a grey heron standing in shallow water with a fish in its beak"}',
           "Request: a heron eating a fish. Write two short yes/no questions.",
           "system user assistant photo bird frog green red water tree flower 0123456789 true false null"]


def tiny_chat_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(SAMPLES * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=None, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", unk_token=None, chat_template=CHAT_TEMPLATE)


def build_tiny_llama(folder: str | Path, *, seed: int = 0) -> Path:
    """Write a tiny random Llama chat model (weights, config, tokenizer with its chat template) to `folder`."""
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    transformers.utils.logging.disable_progress_bar()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = tiny_chat_tokenizer()
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None,
                         tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A test module's tiny Llama on disk (import this fixture with `llm`)."""
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama") / "m")


@pytest.fixture(scope="module")
def llm(folder):
    """The tiny Llama as the registry builds it: the in-process transformers LLM, on the CPU."""
    from core.backends.registry import Backends
    from core.config import Settings

    return Backends(Settings(llm=f"transformers:{folder}", device="cpu")).llm
