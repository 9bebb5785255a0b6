"""Model and Index against the command line: embed_text equals `cadclip embed
--checkpoint`, embed_parts equals the gallery embeddings of `cadclip eval`,
Index.search, Index.similar and Index.similar_to_file equal `cadclip search
--json`."""

import json

import pytest
import torch
from safetensors import safe_open

import cadclip
from conftest import TEXT_FIXTURE, cli

TEXTS = [
    "a washer",
    "M8 hex nut, 13 mm across flats",
    "flange with six bolt holes on a 120 mm circle and a 40 mm bore",
    "plate",
    "a long shaft with two keyways, 250 mm long and 20 mm in diameter, chamfered ends",
    "L bracket 3 mm sheet",
    "gear with 24 teeth",
    "a block with a pocket and a through slot",
    "ümlaut and emoji 🙂 in a caption",
]


@pytest.fixture(scope="module")
def run(tmp_path_factory, synth):
    """A tiny model trained on the synthetic parts (the small BERT of
    tests/fixtures/text as its text tower) and an index of the prepared parts."""
    root = tmp_path_factory.mktemp("model")
    prepared, run, index = root / "p", root / "r", root / "i"
    cli("prepare", synth / "parts", "--captions", synth / "captions.jsonl",
        "--splits", synth / "splits.json", "--out", prepared, "--workers", 2)
    cli("train", "--data", prepared, "--out", run, "--text-model", TEXT_FIXTURE,
        "--epochs", 1, "--batch-size", 8, "--brep-width", 32, "--brep-layers", 1,
        "--brep-heads", 2, "--brep-ffn", 64, "--embed-dim", 32, "--text-head-hidden", 16,
        "--quantity-width", 8, "--max-text-length", 64, "--threads", 2, "--seed", 3)
    cli("index", run / "checkpoints/last.json", prepared, "--out", index, "--threads", 2)
    return dict(prepared=prepared, run=run, index=index,
                checkpoint=run / "checkpoints/last.json")


def test_embed_text_equals_cadclip_embed(run, tmp_path):
    model = cadclip.Model.load(str(run["checkpoint"]), threads=2)
    assert model.threads == 2
    for batch_size in (32, 3):
        out = tmp_path / f"e{batch_size}.safetensors"
        cli("embed", "--checkpoint", run["checkpoint"], "--batch-size", batch_size,
            "--threads", 2, "--output", out, *TEXTS)
        with safe_open(str(out), framework="pt") as f:
            want = f.get_tensor("embeddings")
        got = model.embed_text(TEXTS, batch_size=batch_size)
        assert got.dtype == torch.float32 and got.shape == (len(TEXTS), model.embed_dim)
        assert torch.equal(got.view(torch.int32), want.view(torch.int32))
        assert not got.is_inference()
    assert torch.allclose(got.norm(dim=1), torch.ones(len(TEXTS)))
    assert model.embed_text([]).shape == (0, model.embed_dim)


def test_embed_parts_equals_cadclip_eval(run, tmp_path):
    out = tmp_path / "eval.safetensors"
    cli("eval", run["checkpoint"], "--data", run["prepared"], "--split", "train",
        "--batch-size", 5, "--threads", 2, "--save-embeddings", out)
    with safe_open(str(out), framework="pt") as f:
        want = f.get_tensor("brep")
        ids = json.loads(f.metadata()["brep_ids"])
    data = cadclip.PreparedDataset(run["prepared"])
    graphs = [data[data.find(i)] for i in ids]
    model = cadclip.Model.load(str(run["checkpoint"]))
    got = model.embed_parts(graphs, batch_size=5)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    # Another batching: the same up to rounding.
    assert torch.allclose(model.embed_parts(graphs, batch_size=2), want, atol=1e-5)


def test_index_search_equals_cadclip_search(run):
    index = cadclip.Index.open(str(run["index"]))
    data = cadclip.PreparedDataset(run["prepared"])
    assert len(index) == len(data) and index.dim == 32
    for text in TEXTS[:4]:
        want = json.loads(cli("search", run["index"], text, "-k", 5, "--json",
                              "--threads", 2).stdout)
        assert want["query"] == text
        assert index.search(text, k=5) == want["results"]
    part = data.ids[3]
    want = json.loads(cli("search", run["index"], "--like-id", part, "-k", 4, "--json").stdout)
    got = index.similar(part, k=4)
    assert got == want["results"] and got[0]["id"] == part
    assert part in index and index.item(part)["id"] == part
    with pytest.raises(KeyError):
        index.item("no such part")
    with pytest.raises(cadclip.Error):
        index.similar("no such part")


def test_similar_to_file_equals_cadclip_search_like(run, synth):
    """A part file read in a worker: the answer of `cadclip search --like`,
    with the keywords similar() takes."""
    index = cadclip.Index.open(str(run["index"]))
    part = sorted((synth / "parts").glob("*.step"))[0]
    want = json.loads(cli("search", run["index"], "--like", part, "-k", 4, "--same-size", 20,
                          "--json").stdout)
    got = index.similar_to_file(str(part), k=4, same_size=20)
    assert got == want["results"] and got


def test_filtered_search_equals_cadclip_search(run):
    """Filters, a minimum score, numbers stated in the text and part-query
    controls: the same answers as `cadclip search --json` with those options."""
    index = cadclip.Index.open(str(run["index"]))
    data = cadclip.PreparedDataset(run["prepared"])
    faces = sorted(data.num_faces(i) for i in range(len(data)))
    few = faces[len(faces) // 4]  # about a quarter of the parts have at most this many faces
    text = "a plate with holes, under 100 mm"
    for filters, extra in ((f"faces<={few}", []), ("size<1000 faces>=1", ["--min-score", -0.5])):
        args = ["--filter", filters, *extra]
        want = json.loads(cli("search", run["index"], text, "-k", 50, "--json", "--threads", 2,
                              *args).stdout)
        min_score = extra[1] if extra else None
        got = index.query(text, k=50, filters=filters, min_score=min_score)
        assert got == want
        assert index.search(text, k=50, filters=filters.split(), min_score=min_score) == \
            want["results"]
        assert got["filters"] and got["filters"][0]["origin"] == "given"
    # The filter keeps its parts only, and all of them when k allows.
    got = index.query(text, k=len(data), filters=f"faces<={few}")
    passing = sum(1 for n in faces if n <= few)
    assert got["candidates"] == passing and len(got["results"]) == passing
    assert all(r["faces"] <= few for r in got["results"])
    want = json.loads(cli("search", run["index"], text, "-k", 5, "--strict-numbers",
                          "--json").stdout)
    assert index.query(text, k=5, strict_numbers=True) == want
    part = data.ids[3]
    want = json.loads(cli("search", run["index"], "--like-id", part, "-k", 6, "--same-size", 20,
                          "--ignore-mirrored", "--json").stdout)
    assert index.similar(part, k=6, same_size=20, ignore_mirrored=True) == want["results"]
    assert index.query(like_id=part, k=6, same_size=20, ignore_mirrored=True) == want
    with pytest.raises(TypeError, match="filters"):
        index.search("a washer", k=3, filters={"faces": [1, 10]})
    with pytest.raises(cadclip.Error, match="faces"):
        index.search("a washer", k=3, filters="faces<<3")
    with pytest.raises(ValueError, match="part"):
        index.query("a washer", same_size=10)
    with pytest.raises(ValueError, match="exactly one"):
        index.query("a washer", like_id=part)


def test_index_and_model_agree(run):
    """A query's vector from the index is the model's, up to the grouping of texts."""
    index = cadclip.Index.open(str(run["index"]), text_matmul="fp32")
    assert index.text_matmul == "fp32"
    model = cadclip.Model.load(str(run["checkpoint"]))
    want = model.embed_text(["a washer"])[0]
    assert torch.allclose(index.embed_text("a washer"), want, atol=1e-6)
    # By default queries may run in bfloat16 matmuls (where the CPU has them):
    # the same direction, not the same bits.
    fast = cadclip.Index.open(str(run["index"]))
    assert fast.text_matmul in ("fp32", "bf16")
    assert torch.dot(fast.embed_text("a washer"), want).item() > 0.999
    with pytest.raises(cadclip.Error, match="fp16"):
        cadclip.Index.open(str(run["index"]), text_matmul="fp16")


def test_bad_checkpoints_and_folders_name_the_problem(tmp_path, run):
    with pytest.raises(cadclip.Error, match=str(tmp_path)):
        cadclip.Model.load(str(tmp_path))
    with pytest.raises(cadclip.Error):
        cadclip.Index.open(str(tmp_path))
    model = cadclip.Model.load(str(run["checkpoint"]))
    with pytest.raises(cadclip.Error, match="threads"):
        model.threads = 0
    assert model.config["two_tower"]["embed_dim"] == 32
    assert 0 < model.logit_scale <= 100
