"""The real backends through their real code paths, offline: open_clip with random weights on a tiny
architecture, a tiny diffusers pipeline assembled from configs, and the openai client against
llama-cpp-python's server on 127.0.0.1 (plus llama.cpp in process)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from core.backends import registry
from core.backends.base import ChatMessage, Embedder, JudgeRequest
from core.config import Settings
from core.contracts.errors import BackendError
from tests.conftest_llama import llama_server, smollm_path  # noqa: F401  (session fixtures)

TINY_CLIP = {  # a deliberately small CLIP: 32-d space, 32 px images, two layers per tower
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "head_width": 32, "patch_size": 8},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2},
}
CPU = dict(device="cpu", dtype="auto", batch_size=3)


# --- open_clip -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_clip_name(tmp_path_factory) -> str:
    open_clip = pytest.importorskip("open_clip")
    folder = tmp_path_factory.mktemp("clip_cfg")
    (folder / "EcoTiny-ViT.json").write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(folder / "EcoTiny-ViT.json")
    return "EcoTiny-ViT"


@pytest.fixture(scope="module")
def tiny_clip(tiny_clip_name):
    import torch

    torch.manual_seed(0)
    return registry.create_embedder(Settings(embedder=f"open_clip:{tiny_clip_name}", **CPU))


def _pictures(n: int) -> list[Image.Image]:
    rng = np.random.default_rng(0)
    sizes = [(40, 30), (64, 64), (17, 90), (32, 32), (120, 80)]
    return [Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)) for w, h in sizes[:n]]


def test_open_clip_embeds_images_and_texts(tiny_clip):
    assert isinstance(tiny_clip, Embedder)
    assert tiny_clip.model_id.startswith("open_clip:EcoTiny-ViT#open_clip=")
    assert tiny_clip.is_standin  # random weights
    assert tiny_clip.dim == 32 and tiny_clip.max_text_tokens == 77
    images = _pictures(5) + [Image.new("L", (20, 20), 128)]  # batches of 3; a grey picture too
    vecs = tiny_clip.embed_images(images)
    assert vecs.shape == (6, 32) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.allclose(tiny_clip.embed_images(images[:2]), vecs[:2], atol=1e-5)  # batching is invisible
    texts = tiny_clip.embed_texts(["a heron", "a red fox in snow"])
    assert texts.shape == (2, 32) and np.allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)
    batch = tiny_clip.preprocess_images(images[:3])
    assert np.allclose(tiny_clip.encode_preprocessed(batch), vecs[:3], atol=1e-5)


def test_open_clip_long_text_is_truncated(tiny_clip):
    long = "a small brown bird with streaked breast " * 60
    assert tiny_clip.count_tokens(long) > tiny_clip.max_text_tokens
    assert tiny_clip.count_tokens("a heron") == 4
    vec = tiny_clip.embed_texts([long])
    assert vec.shape == (1, 32) and np.isfinite(vec).all()


def test_open_clip_local_checkpoint_reproduces_the_model(tiny_clip, tmp_path):
    import torch

    ckpt = tmp_path / "tiny.pt"
    torch.save(tiny_clip.model.state_dict(), ckpt)
    again = registry.create_embedder(Settings(embedder=f"open_clip:EcoTiny-ViT@{ckpt}", **CPU))
    assert not again.is_standin
    images = _pictures(2)
    assert np.allclose(again.embed_images(images), tiny_clip.embed_images(images), atol=1e-5)
    assert np.allclose(again.embed_texts(["moss"]), tiny_clip.embed_texts(["moss"]), atol=1e-5)


def test_open_clip_unreadable_checkpoint_is_a_backend_error(tiny_clip_name, tmp_path):
    bad = tmp_path / "broken.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(BackendError) as err:
        registry.create_embedder(Settings(embedder=f"open_clip:{tiny_clip_name}@{bad}", **CPU))
    assert "Could not load the weights" in err.value.message and "checkpoint" in err.value.hint


def test_open_clip_clip_judge_runs_on_the_real_embedder(tiny_clip):
    judge = registry.create_judge(Settings(judge="clip"), tiny_clip)
    ans = judge.ask(JudgeRequest(image=_pictures(1)[0], question="Is there a nest?"))
    assert ans.answer in ("yes", "no") and set(ans.top_logprobs) == {"Yes", "No"}


# --- diffusers -------------------------------------------------------------------------------------
def _tiny_tokenizer(folder: Path):
    from transformers import CLIPTokenizer

    letters = "abcdefghijklmnopqrstuvwxyz"
    tokens = ["<|startoftext|>", "<|endoftext|>"] + list(letters) + [c + "</w>" for c in letters]
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"),
                         model_max_length=77), len(tokens)


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    diffusers = pytest.importorskip("diffusers")
    import torch
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    tokenizer, vocab = _tiny_tokenizer(tmp_path_factory.mktemp("tok"))
    text = CLIPTextModel(CLIPTextConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64,
                                        num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=77,
                                        bos_token_id=0, eos_token_id=1, pad_token_id=1))
    unet = diffusers.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=32, attention_head_dim=8)
    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(32, 64),
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
    scheduler = diffusers.DDIMScheduler(beta_schedule="scaled_linear", beta_start=0.00085, beta_end=0.012,
                                        clip_sample=False, set_alpha_to_one=False,
                                        steps_offset=1)
    return diffusers.StableDiffusionPipeline(vae=vae, text_encoder=text, tokenizer=tokenizer, unet=unet,
                                             scheduler=scheduler, safety_checker=None, feature_extractor=None,
                                             requires_safety_checker=False)


def test_diffusers_generator_with_an_injected_pipeline(tiny_pipeline):
    from core.backends.diffusers_generator import DiffusersGenerator

    gen = DiffusersGenerator("tiny-test-pipeline", pipeline=tiny_pipeline, device="cpu", num_inference_steps=2)
    a = gen.generate("a heron on one leg", seed=5, size=32)
    b = gen.generate("a heron on one leg", seed=5, size=32)
    c = gen.generate("a heron on one leg", seed=6, size=20)  # 20 is not a multiple of 8
    assert isinstance(a.image, Image.Image) and a.image.size == (32, 32) and a.image.mode == "RGB"
    assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
    assert c.image.size == (20, 20)
    assert not np.array_equal(np.asarray(a.image.resize((20, 20))), np.asarray(c.image))
    assert a.model_id == "diffusers:tiny-test-pipeline" and not gen.is_standin


def test_diffusers_generator_loads_a_local_folder_offline(tiny_pipeline, tmp_path):
    tiny_pipeline.save_pretrained(tmp_path / "sd-tiny")
    gen = registry.create_generator(Settings(generator=f"diffusers:{tmp_path / 'sd-tiny'}", **CPU))
    gen.num_inference_steps = 2
    out = gen.generate("a fern", seed=0, size=32)
    assert out.image.size == (32, 32)


# --- llama.cpp: in process, and the openai client against its server -------------------------------
def test_llamacpp_in_process_chat(smollm_path):
    llm = registry.create_llm(Settings(llm="llama_cpp", threads=1))
    assert not llm.is_standin and llm.is_tiny and "small" in llm.notice
    msgs = [ChatMessage("system", "You are brief."), ChatMessage("user", "Name one bird.")]
    first = llm.chat(msgs, max_tokens=16, seed=1)
    assert isinstance(first, str) and first
    assert llm.chat(msgs, max_tokens=16, seed=1) == first  # temperature 0: repeatable
    schema = {"type": "object", "properties": {"bird": {"type": "string"}}, "required": ["bird"]}
    answer = llm.chat(msgs, max_tokens=48, json_schema=schema)
    assert isinstance(json.loads(answer), dict)


def _openai_settings(base: str) -> Settings:
    return Settings(openai_base_url=base, llm="openai", judge="openai", captioner="openai", llm_model="smollm2",
                    judge_model="smollm2", backend_timeout_s=60.0, backend_retries=0, top_logprobs=5)


def test_openai_llm_against_llama_server(llama_server):
    llm = registry.create_llm(_openai_settings(llama_server))
    assert not llm.is_standin and "127.0.0.1" in llm.model_id
    text = llm.chat([ChatMessage("user", "Say hello.")], max_tokens=12)
    assert isinstance(text, str) and text
    schema = {"type": "object", "properties": {"bird": {"type": "string"}}, "required": ["bird"]}
    answer = llm.chat([ChatMessage("user", "Name a bird as JSON.")], max_tokens=48, json_schema=schema)
    assert isinstance(json.loads(answer), dict)  # the server refused json_schema; json_object + schema worked


def test_smollm2_sub_questions_follow_the_yes_no_pattern_in_the_requests_words(llama_server):
    """The pattern is a grammar on the real server: whatever the 135M model says, each question it writes opens
    with a yes/no word, ends with '?', and uses only the request's words and the linking words."""
    import re

    from core.methods import llm_checks, llm_schemas, llm_tasks
    from core.prompts import rerank as prompts

    llm = registry.create_llm(_openai_settings(llama_server).replace(llm_model="SmolLM2-135M-Instruct"))
    assert llm.own_words
    query = "a heron eating a fish at dusk"
    pattern = llm_schemas.yes_no_pattern(llm_checks.request_vocabulary(query))
    schema = llm_schemas.schema_for(llm_schemas.SubQuestionsReply, items={"questions": (3, 3)}, echo=query,
                                    patterns={"questions": pattern})
    text = llm.chat([ChatMessage("system", prompts.SUBQ_SYSTEM.format(n=3)),
                     ChatMessage("user", prompts.subq_user(query, ""))], max_tokens=200, json_schema=schema)
    questions = json.loads(text)["questions"]
    assert len(questions) == 3 and all(re.fullmatch(pattern, q) for q in questions), questions
    notices: list[str] = []
    used = llm_tasks.subquestions(llm, query, "", 3, notices)
    assert len(used) == 3 and all(llm_checks.is_yes_no(q) for q in used), (used, notices)


def test_openai_judge_against_llama_server(llama_server):
    """The reply's log-probabilities are read; and SmolLM2, a text-only model whose server drops the image
    part, fails the judge's two-picture check, so it never judges a photo."""
    from core.backends.judge_checks import honest_reply

    judge = registry.create_judge(_openai_settings(llama_server), embedder=None)
    judge.max_tokens = 8  # llama-cpp-python computes log-probabilities slowly; the first token is what counts
    req = JudgeRequest(image=Image.new("RGB", (64, 48), (30, 140, 40)), question="Is there a bird?",
                       query="bird on a branch", context="Birds have feathers and beaks.")
    _, top = honest_reply(judge.create(req), llama_server)
    assert top and all(isinstance(v, float) and v <= 0.0 for v in top.values())
    assert len(top) <= 5
    with pytest.raises(BackendError, match="does not see the photos"):
        judge.ask(req)


def test_openai_captioner_against_llama_server(llama_server):
    cap = registry.create_captioner(_openai_settings(llama_server))
    cap.max_tokens = 12  # keeps the test quick on a CPU
    text = cap.caption(Image.new("RGB", (32, 32), (200, 200, 200)))
    assert isinstance(text, str) and "\n" not in text


def test_openai_unknown_route_is_a_backend_error(llama_server):
    gen = registry.create_generator(Settings(generator="openai:gpt-image-1", openai_base_url=llama_server,
                                             backend_retries=0))
    with pytest.raises(BackendError) as err:
        gen.generate("a fern", seed=0, size=64)
    assert "127.0.0.1" in err.value.message
