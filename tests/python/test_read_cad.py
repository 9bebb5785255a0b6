"""read_cad, read_cad_many and PreparedDataset against `cadclip prepare`: the
same file gives the same tensors bit for bit, failures are items, and a file
that crashes Open CASCADE never takes the Python process with it."""

import inspect
import json
import os
import pathlib
import pickle

import pytest
import torch
from safetensors import safe_open

import cadclip
from conftest import cli, shared_parts


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes: equal bits, not merely equal values (0.0 vs -0.0, NaN)."""
    return t.reshape(-1).contiguous().view(torch.uint8)


def shard_rows(folder: pathlib.Path) -> dict[str, dict[str, torch.Tensor]]:
    """Every model of a prepared folder, read from its shards with the safetensors
    package (not cadclip): id -> {tensor name: this model's rows}."""
    manifest = json.loads((folder / "manifest.json").read_text())
    models = {}
    for shard in manifest["shards"]:
        with safe_open(str(folder / shard["file"]), framework="pt") as f:
            meta = f.metadata()
            ids = json.loads(meta["ids"])
            units = json.loads(meta["units"])
            hashes = json.loads(meta["geometry_hashes"])
            t = {name: f.get_tensor(name) for name in f.keys()}
        fo, eo = t["face_offsets"], t["edge_offsets"]
        for i, model_id in enumerate(ids):
            rows = {}
            for name, value in t.items():
                if name in ("face_offsets", "edge_offsets"):
                    continue
                if name.startswith("face_"):
                    rows[name] = value[fo[i]:fo[i + 1]]
                elif name.startswith("edge_"):
                    rows[name] = value[eo[i]:eo[i + 1]]
                else:
                    rows[name] = value[i]
            models[model_id] = dict(tensors=rows, unit=units[i], hash=hashes[i])
    return models


def assert_same_as_shard(graph: cadclip.BRepGraph, stored: dict) -> None:
    tensors = graph.tensors()
    assert sorted(tensors) == sorted(stored["tensors"])
    for name, value in tensors.items():
        want = stored["tensors"][name]
        assert value.dtype == want.dtype and value.shape == want.shape, name
        assert torch.equal(bits(value), bits(want)), f"{graph.id}: {name} differs"
    assert graph.unit == stored["unit"]
    assert graph.geometry_hash == stored["hash"]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, synth):
    """`cadclip prepare` of the shared parts and the synthetic STEP parts, named on
    the command line (so the ids are the file stems)."""
    files = shared_parts() + sorted((synth / "parts").rglob("*.step"))[:8]
    out = tmp_path_factory.mktemp("prepared") / "p"
    cli("prepare", *files, "--out", out, "--workers", 2)
    return files, out


def test_read_cad_equals_prepare_bit_for_bit(prepared):
    files, folder = prepared
    stored = shard_rows(folder)
    assert len(stored) >= 10
    for path in files:
        if path.stem not in stored:
            with pytest.raises(cadclip.ReadError):
                cadclip.read_cad(path)
            continue
        assert_same_as_shard(cadclip.read_cad(path), stored[path.stem])
    # In this process (no worker): the same bits.
    screw = next(p for p in files if p.name == "screw.step")
    assert_same_as_shard(cadclip.read_cad(screw, isolated=False), stored["screw"])


def test_read_cad_many_equals_prepare_in_input_order(prepared):
    files, folder = prepared
    stored = shard_rows(folder)
    for workers in (1, 2):
        results = list(cadclip.read_cad_many(files, workers=workers))
        assert [r.index for r in results] == list(range(len(files)))
        assert [r.path for r in results] == [str(f) for f in files]
        for path, result in zip(files, results):
            assert result.ok == (path.stem in stored), result
            if result.ok:
                assert result.graph.id == path.stem
                assert_same_as_shard(result.graph, stored[path.stem])


def test_prepared_dataset_equals_shards(prepared):
    files, folder = prepared
    stored = shard_rows(folder)
    data = cadclip.PreparedDataset(folder)
    assert len(data) == len(stored)
    assert data.ids == sorted(stored)  # shards keep id order
    for i in range(len(data)):
        assert_same_as_shard(data[i], stored[data.id(i)])
        assert data.num_faces(i) == data[i].num_faces
    assert data.find("screw") == data.ids.index("screw")
    assert data.find("no such part") is None
    with pytest.raises(IndexError):
        data[len(data)]
    # Pickles as its folders (DataLoader workers under spawn).
    again = pickle.loads(pickle.dumps(data))
    assert again.ids == data.ids
    assert torch.equal(again[0].face_grids, data[0].face_grids)


def test_prepared_dataset_of_two_folders_and_a_split(prepared, synth, tmp_path):
    files, folder = prepared
    other = tmp_path / "synth_prepared"
    rest = sorted((synth / "parts").rglob("*.step"))[8:]  # the parts `prepared` does not hold
    cli("prepare", *rest, "--captions", synth / "captions.jsonl",
        "--splits", synth / "splits.json", "--out", other, "--workers", 2)
    both = cadclip.PreparedDataset([folder, other])
    first, second = cadclip.PreparedDataset(folder), cadclip.PreparedDataset(other)
    assert len(both) == len(first) + len(second)
    assert both.ids == first.ids + second.ids
    last = len(both) - 1
    assert torch.equal(both[last].edge_grids, second[len(second) - 1].edge_grids)
    splits = json.loads((synth / "splits.json").read_text())
    train = cadclip.PreparedDataset(other, split="train")
    assert train.ids == sorted(i for i in splits["train"] if second.find(i) is not None)
    assert 0 < len(train) < len(second)
    captions = train.captions()
    assert set(captions) == set(train.ids)
    assert all({"level", "text"} <= set(c) for cs in captions.values() for c in cs)
    # A dataset file names the folders (relative to the file, comments allowed).
    listing = tmp_path / "both.txt"
    listing.write_text(f"# the two parts\n{folder}\n{other.name}\n")
    listed = cadclip.PreparedDataset(listing)
    assert listed.folders == [str(folder), str(other)] and listed.ids == both.ids
    assert pickle.loads(pickle.dumps(listed)).ids == both.ids
    with pytest.raises(cadclip.Error, match="no_such"):
        cadclip.PreparedDataset(tmp_path / "no_such")
    with pytest.raises(cadclip.Error, match="in both"):
        cadclip.PreparedDataset([folder, folder])
    with pytest.raises(cadclip.Error, match="split"):
        cadclip.PreparedDataset(other, split="dev")


def test_collate_through_a_dataloader(prepared):
    _, folder = prepared
    data = cadclip.PreparedDataset(folder)
    loader = torch.utils.data.DataLoader(data, batch_size=4, collate_fn=cadclip.collate,
                                         num_workers=2)
    seen = []
    for batch in loader:
        b = len(batch["ids"])
        n = int(batch["face_offsets"][-1])
        assert batch["face_grids"].shape == (n, 7, 10, 10)
        assert batch["graph_attrs"].shape == (b, 4)
        m = batch["padding_mask"].shape[1]
        assert batch["hops"].shape == (b, m, m)
        seen += batch["ids"]
    assert seen == data.ids
    # The batch holds the graphs' own values: faces of graph 0, channels first.
    batch = cadclip.collate([data[0], data[1]])
    f0 = data[0].num_faces
    assert torch.equal(batch["face_grids"][:f0], data[0].face_grids.permute(0, 3, 1, 2))
    with pytest.raises(cadclip.Error):
        cadclip.collate([])


def malformed_corpus(folder: pathlib.Path, good: pathlib.Path) -> list[pathlib.Path]:
    """Files a crawl of real folders meets: truncated, garbage, empty, a wrong
    extension's content, and one that is not there."""
    folder.mkdir(parents=True, exist_ok=True)
    text = good.read_bytes()
    (folder / "truncated.step").write_bytes(text[: len(text) // 2])
    (folder / "garbage.step").write_bytes(bytes(range(256)) * 40)
    (folder / "empty.step").write_bytes(b"")
    (folder / "json_in_step.step").write_text('{"not": "a step file"}')
    (folder / "garbage.brep").write_text("DBRep_DrawableShape\n\nCASCADE Topology V1, (c)\n"
                                         "Locations 3\n1\n")
    return [folder / n for n in ("truncated.step", "garbage.step", "empty.step",
                                 "json_in_step.step", "garbage.brep")] + [folder / "missing.step"]


def test_failures_are_items_and_a_crash_costs_one_item(tmp_path, monkeypatch):
    good = shared_parts()[0]  # screw.step
    bad = malformed_corpus(tmp_path / "bad", good)
    crash = tmp_path / "crash_me.step"
    crash.write_bytes(good.read_bytes())
    # The worker aborts on this file name (a debug hook of prepare-worker), as
    # Open CASCADE does on some real files.
    monkeypatch.setenv("CADCLIP_DEBUG_CRASH_ON", "crash_me.step")
    inputs = [good] + bad + [crash, good]
    for workers in (1, 3):
        results = list(cadclip.read_cad_many(inputs, workers=workers))
        assert len(results) == len(inputs)
        assert results[0].ok and results[-1].ok
        kinds = {r.path: (r.error.kind if r.error else None) for r in results}
        assert kinds[str(tmp_path / "bad/missing.step")] == "unreadable"
        assert kinds[str(crash)] == "crash"
        for r in results[1:-1]:
            assert not r.ok, r
            assert isinstance(r.error, cadclip.ReadError)
            assert r.error.path == r.path and r.error.reason
            with pytest.raises(cadclip.ReadError):
                r.unwrap()
    with pytest.raises(cadclip.ReadError) as e:
        cadclip.read_cad(crash)
    assert e.value.kind == "crash" and "crash_me.step" in str(e.value)
    with pytest.raises(cadclip.ReadError) as e:
        cadclip.read_cad(bad[1])
    assert e.value.kind == "ingest"


def worker_children() -> list[int]:
    """Pids of this process's children that run cadclip."""
    me = os.getpid()
    out = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and "cadclip" in (stat.parent / "cmdline").read_bytes().decode(
                errors="replace"):
            out.append(int(stat.parent.name))
    return out


def test_closing_the_iterator_stops_the_workers(synth):
    files = sorted((synth / "parts").rglob("*.step"))
    it = cadclip.read_cad_many(files, workers=2)
    assert len(it) == len(files)
    first = next(it)
    assert first.index == 0
    it.close()
    assert worker_children() == []
    with pytest.raises(StopIteration):
        next(it)


def test_bad_arguments_say_what_to_do(tmp_path):
    with pytest.raises(cadclip.Error, match="unit"):
        cadclip.read_cad(tmp_path / "x.brep", unit="furlong")
    with pytest.raises(cadclip.Error, match="ids"):
        cadclip.read_cad_many(["a.step", "b.step"], ids=["a"])
    with pytest.raises(cadclip.Error, match="not a folder"):
        cadclip.cad_files(str(tmp_path / "nothing"))
    with pytest.raises(cadclip.Error, match="manifest|prepared|folder"):
        cadclip.PreparedDataset(tmp_path)


def test_graph_views_numpy_pairwise_and_pickle(synth):
    path = sorted((synth / "parts").rglob("*.step"))[0]
    g = cadclip.read_cad(path)
    assert cadclip.cad_files(str(synth / "parts"))[0] == str(path)
    f, e = g.num_faces, g.num_edges
    assert g.face_grids.shape == (f, 10, 10, 7) and g.face_grids.dtype == torch.float32
    assert g.edge_src.dtype == torch.int32 and g.edge_src.shape == (e,)
    assert int(g.edge_src.max()) < f
    assert g.bbox_mm.shape == (6,) and g.scale_mm > 0
    assert g.unit.startswith("file:") and g.solid_count == 1 and g.closed
    arrays = g.to_numpy()
    assert arrays["face_grids"].shape == (f, 10, 10, 7) and arrays["id"] == g.id
    # Views: the tensor and the array share the graph's memory.
    assert arrays["face_areas"].ctypes.data == g.face_areas.data_ptr()
    pair = g.pairwise()
    assert pair["hops"].shape == (f, f) and int(pair["hops"].diagonal().abs().sum()) == 0
    again = pickle.loads(pickle.dumps(g))
    for name, value in g.tensors().items():
        assert torch.equal(bits(value), bits(again.tensors()[name])), name
    assert "faces=" in repr(g)


def test_optional_graph_libraries(synth):
    g = cadclip.read_cad(sorted((synth / "parts").rglob("*.step"))[0], isolated=False)
    try:
        import torch_geometric  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="torch-geometric"):
            g.to_pyg()
    else:
        d = g.to_pyg()
        assert d.num_nodes == g.num_faces and d.edge_index.shape == (2, g.num_edges)
    try:
        import dgl  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="dgl"):
            g.to_dgl()
    else:
        d = g.to_dgl()
        assert d.num_nodes() == g.num_faces and d.num_edges() == g.num_edges


def test_stubs_name_what_the_extension_has():
    stub = (pathlib.Path(cadclip.__file__).parent / "_core.pyi").read_text()
    import re
    declared = set(re.findall(r"^(?:class|def) (\w+)", stub, re.M))
    declared |= set(re.findall(r"^(\w+): ", stub, re.M))
    have = {n for n in dir(cadclip._core) if not n.startswith("__")} | {"__version__"}
    assert have - declared == set(), "in the extension but not in _core.pyi"
    assert declared - have - {"__version__"} == set(), "in _core.pyi but not in the extension"
    assert cadclip.__version__ == cadclip._core.__version__
    for name in cadclip.__all__:
        assert getattr(cadclip, name).__doc__ or name == "__version__", f"{name} has no docstring"


def test_read_cad_failure_kinds_are_those_of_cadclip_prepare(tmp_path, monkeypatch):
    """One worker path, one list of kinds: read_cad (isolated and in this process)
    and read_cad_many name each failure as `cadclip prepare` does in failures.jsonl
    for the same file and limits, and every name is one of the C++ enum's."""
    screw, part_a = shared_parts()[0], shared_parts()[3]  # 10 and 32 faces
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "screw.step").write_bytes(screw.read_bytes())
    (folder / "too_many_faces.step").write_bytes(part_a.read_bytes())
    (folder / "too_large.step").write_bytes(part_a.read_bytes() + b" " * 300_000)
    (folder / "garbage.step").write_bytes(bytes(range(256)) * 40)
    (folder / "crash_me.step").write_bytes(screw.read_bytes())
    (folder / "hang_me.step").write_bytes(screw.read_bytes())
    limits = dict(max_faces=20, max_file_mb=0.2, file_timeout_s=3)
    monkeypatch.setenv("CADCLIP_DEBUG_CRASH_ON", "crash_me.step")
    monkeypatch.setenv("CADCLIP_DEBUG_HANG_ON", "hang_me.step")
    out = tmp_path / "prepared"
    cli("prepare", folder, "--out", out, "--workers", 1, "--max-faces", 20, "--max-file-mb", 0.2,
        "--file-timeout", 3, check=False)
    from_prepare = {}
    for line in (out / "failures.jsonl").read_text().splitlines():
        failure = json.loads(line)
        from_prepare[pathlib.Path(failure["path"]).name] = failure["kind"]
    assert from_prepare == {"too_many_faces.step": "ingest", "too_large.step": "too_large",
                            "garbage.step": "ingest", "crash_me.step": "crash",
                            "hang_me.step": "timeout"}
    assert set(from_prepare.values()) <= set(cadclip._core._failure_kinds())

    paths = sorted(folder.iterdir())
    many = {pathlib.Path(r.path).name: r.error.kind
            for r in cadclip.read_cad_many(paths, workers=1, **limits) if not r.ok}
    assert many == from_prepare
    for path in paths:
        if path.name not in from_prepare:
            assert cadclip.read_cad(path, **limits).num_faces == 10
            continue
        with pytest.raises(cadclip.ReadError) as e:
            cadclip.read_cad(path, **limits)
        assert e.value.kind == from_prepare[path.name], e.value
        if path.name in ("crash_me.step", "hang_me.step"):
            continue  # the hooks act in worker processes only
        with pytest.raises(cadclip.ReadError) as e:
            cadclip.read_cad(path, isolated=False, **limits)
        assert e.value.kind == from_prepare[path.name], e.value
    with pytest.raises(cadclip.ReadError) as e:
        cadclip.read_cad(folder / "too_many_faces.step", max_faces=20)
    assert "over the limit of 20 (--max-faces, max_faces in Python" in e.value.reason


def test_read_cad_takes_the_default_limits_of_the_command_line():
    defaults = cadclip._core._default_limits()
    assert set(defaults) == {"max_faces", "max_edges", "max_file_mb", "file_timeout_s"}
    assert defaults["max_faces"] >= 1100  # real purchased parts pass
    signature = inspect.signature(cadclip.read_cad).parameters
    for name, value in defaults.items():
        assert signature[name].default == value, name
