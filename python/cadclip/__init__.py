"""cadclip from Python: CAD files to B-Rep graphs, prepared datasets, models and indexes.

The C++ core of cadclip (the same code as the ``cadclip`` command) as a module:

- ``read_cad(path)`` and ``read_cad_many(paths, workers=N)``: STEP, IGES, BREP and
  DeepCAD JSON files to ``BRepGraph`` objects whose arrays are ``torch.Tensor`` views,
  read in isolated worker processes so that a file which crashes Open CASCADE costs
  one item, never this process;
- ``PreparedDataset(folder_or_folders)``: the shards of ``cadclip prepare`` as a
  ``torch.utils.data.Dataset``, with ``collate`` to the B-Rep encoder's batch;
- ``Model.load(checkpoint)``: ``embed_text`` and ``embed_parts``;
- ``Index.open(folder)``: ``search``, ``similar``.

docs/PYTHON.md is the tutorial.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Optional, Union

# The extension links the LibTorch of the torch wheel; importing torch first
# loads that LibTorch (and its Python bindings) into the process.
import torch
import torch.utils.data

from . import _core
from ._core import (
    BRepGraph,
    Error,
    Index,
    Model,
    ReadError,
    ReadResult,
    cad_files,
    collate,
    set_log_level,
)

__version__: str = _core.__version__

__all__ = [
    "BRepGraph",
    "Error",
    "Index",
    "Model",
    "PreparedDataset",
    "ReadError",
    "ReadResult",
    "__version__",
    "cad_files",
    "collate",
    "executable",
    "read_cad",
    "read_cad_many",
    "set_log_level",
    "to_numpy",
    "to_pyg",
    "to_dgl",
    "worker_binary",
]

PathLike = Union[str, "os.PathLike[str]"]


_BIN = Path(__file__).resolve().parent / "bin"


def _find_worker() -> str:
    """The executable whose worker processes read CAD files: cadclip-ingest-worker
    (``cadclip prepare-worker`` without LibTorch, quick to start), else cadclip."""
    override = os.environ.get("CADCLIP_WORKER_BINARY")
    if override:
        return override
    light = _BIN / "cadclip-ingest-worker"
    return str(light if light.exists() else _BIN / "cadclip")


_core._set_worker_binary(_find_worker())


def worker_binary() -> str:
    """The executable whose ``prepare-worker`` processes read CAD files:
    ``cadclip/bin/cadclip-ingest-worker`` in the package (``CADCLIP_WORKER_BINARY``
    overrides it; any cadclip executable of the same build works)."""
    return _core._worker_binary()


def executable() -> str:
    """The ``cadclip`` command this package was built with (``python -m cadclip`` runs it)."""
    return str(_BIN / "cadclip")


# The ingest limits' defaults, from the one description that `cadclip prepare`,
# `index`, `search` and `serve` use too (cadclip/data/ingest_limits.h).
_LIMITS = _core._default_limits()


def _options(unit, max_faces, max_edges, deepcad_symmetric_full, file_timeout_s, max_file_mb):
    return _core._ReadOptions(
        unit=unit,
        max_faces=max_faces,
        max_edges=max_edges,
        deepcad_symmetric_full=deepcad_symmetric_full,
        file_timeout_s=file_timeout_s,
        max_file_mb=max_file_mb,
    )


def read_cad(
    path: PathLike,
    unit: Optional[str] = None,
    *,
    id: Optional[str] = None,
    isolated: bool = True,
    max_faces: int = _LIMITS["max_faces"],
    max_edges: int = _LIMITS["max_edges"],
    deepcad_symmetric_full: bool = True,
    file_timeout_s: float = _LIMITS["file_timeout_s"],
    max_file_mb: float = _LIMITS["max_file_mb"],
) -> BRepGraph:
    """Reads one CAD file (STEP, IGES, BREP or DeepCAD JSON) as a ``BRepGraph``.

    The graph is the one ``cadclip prepare`` stores for the file with the same
    options, bit for bit. ``unit`` is the unit of unitless inputs (BREP, DeepCAD
    JSON): ``"mm"`` (the default), ``"cm"``, ``"m"`` or ``"inch"``; STEP and IGES state
    their own. The id is the file stem unless ``id`` is given.

    By default the file is read in a fresh ``cadclip prepare-worker`` process, so
    that a crash or hang inside Open CASCADE (limited by ``file_timeout_s``) raises
    ``ReadError`` instead of killing Python; ``isolated=False`` reads it in this
    process, which saves starting the worker and setting up Open CASCADE's
    readers again (most of a second per call) but trusts the file. For many
    files use ``read_cad_many``, whose workers read one file after another.

    Raises ``ReadError`` (``.path``, ``.kind``, ``.reason``) for a file that cannot
    be read as a part, ``Error`` for bad arguments.
    """
    options = _options(unit, max_faces, max_edges, deepcad_symmetric_full, file_timeout_s,
                       max_file_mb)
    return _core._read_cad(os.fspath(path), options, isolated, id)


def read_cad_many(
    paths: Iterable[PathLike],
    workers: int = 0,
    unit: Optional[str] = None,
    *,
    ids: Optional[Sequence[str]] = None,
    max_faces: int = _LIMITS["max_faces"],
    max_edges: int = _LIMITS["max_edges"],
    deepcad_symmetric_full: bool = True,
    file_timeout_s: float = _LIMITS["file_timeout_s"],
    max_file_mb: float = _LIMITS["max_file_mb"],
) -> Iterator[ReadResult]:
    """Reads many CAD files in isolated worker processes; yields one ``ReadResult``
    per path, in input order.

    The files go to ``workers`` ``cadclip prepare-worker`` processes (0: one per
    core, never more than the files), the same pool as ``cadclip prepare``: a file
    that crashes or hangs Open CASCADE costs its own item (``result.error.kind`` is
    ``"crash"`` or ``"timeout"``) and the worker is replaced; this process never
    runs Open CASCADE. Each result has ``.graph`` (a ``BRepGraph``) or ``.error`` (a
    ``ReadError``), ``.ok``, ``.unwrap()``, ``.path``, ``.id``, ``.seconds`` and
    ``.warnings``. Ids are the file stems unless ``ids`` are given.

    Reading starts at once, in the background; closing the iterator (or breaking
    out of a loop over it and dropping it) stops the workers.
    """
    path_list = [os.fspath(p) for p in paths]
    if ids is None:
        id_list = [Path(p).stem for p in path_list]
    else:
        id_list = list(ids)
        if len(id_list) != len(path_list):
            raise Error(f"read_cad_many got {len(path_list)} paths and {len(id_list)} ids; "
                        "give one id per path, or none")
    if workers < 0:
        raise Error(f"workers = {workers}; use 0 (one per core) or more")
    options = _options(unit, max_faces, max_edges, deepcad_symmetric_full, file_timeout_s,
                       max_file_mb)
    return _core._ReadMany(path_list, id_list, options, workers)


class PreparedDataset(torch.utils.data.Dataset):
    """The models of one or more prepared folders (``cadclip prepare``) as a
    ``torch.utils.data.Dataset`` of ``BRepGraph``.

    The shards are memory-mapped: opening reads their headers and offsets, and
    ``dataset[i]`` reads model ``i``'s rows only. Several folders are numbered one
    after another, in the order given; an id found in two folders is an error.
    A dataset file (a text file naming prepared folders, one per line, as
    ``cadclip train --data`` and ``cadclip merge`` take it) stands for its folders.
    ``split`` (``"train"``, ``"validation"`` or ``"test"``) keeps the models each
    folder's splits.json puts in that split, in id order.

    Use ``cadclip.collate`` as a ``DataLoader``'s ``collate_fn`` to get the B-Rep
    encoder's batch (a dict of tensors). The object pickles as its folders, so it
    works with ``DataLoader(num_workers=N)`` under any start method.
    """

    def __init__(self, folders: Union[PathLike, Sequence[PathLike]], split: Optional[str] = None):
        if isinstance(folders, (str, os.PathLike)):
            folders = [folders]
        paths = [os.fspath(f) for f in folders]
        if not paths:
            raise Error("PreparedDataset needs at least one prepared folder")
        # Dataset files (text files listing folders, as `cadclip train --data`
        # takes them) stand for their folders.
        self.folders: list[str] = _core._dataset_folders(paths)
        if split is not None and split not in ("train", "validation", "test"):
            raise Error(f"split '{split}' is not one of train, validation, test")
        self.split = split
        self._open()

    def _open(self) -> None:
        self._parts = [_core._Dataset(f) for f in self.folders]
        self._rows: list[tuple[int, int]] = []  # (folder, row) of each item
        owner: dict[str, str] = {}
        for p, (folder, part) in enumerate(zip(self.folders, self._parts)):
            ids = part.ids()
            rows = range(len(ids))
            if self.split is not None:
                wanted = set(_read_splits(folder).get(self.split, []))
                rows = [r for r in rows if ids[r] in wanted]
            for r in rows:
                if ids[r] in owner:
                    raise Error(f"model id '{ids[r]}' is in both {owner[ids[r]]} and {folder}; "
                                "a dataset of several folders needs distinct ids")
                owner[ids[r]] = folder
                self._rows.append((p, r))
        self._index = {self.id(i): i for i in range(len(self._rows))}

    def __getstate__(self) -> dict[str, Any]:
        return {"folders": self.folders, "split": self.split}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.folders = state["folders"]
        self.split = state["split"]
        self._open()

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> BRepGraph:
        if index < 0:
            index += len(self._rows)
        if not 0 <= index < len(self._rows):
            raise IndexError(f"index {index} is out of range for {len(self._rows)} models")
        p, r = self._rows[index]
        return self._parts[p].graph(r)

    def id(self, index: int) -> str:
        """The model id of item ``index``."""
        p, r = self._rows[index]
        return self._parts[p].id(r)

    @property
    def ids(self) -> list[str]:
        """Every item's model id, in item order."""
        return [self.id(i) for i in range(len(self._rows))]

    def find(self, id: str) -> Optional[int]:
        """The item index of a model id, or None."""
        return self._index.get(id)

    def num_faces(self, index: int) -> int:
        """Faces of item ``index``, from the offsets (without reading the model)."""
        p, r = self._rows[index]
        return self._parts[p].num_faces(r)

    def captions(self) -> dict[str, list[dict[str, Any]]]:
        """The captions of the items, by model id: lists of {"level", "text"} (and
        "facts" where the caption file had them), from each folder's captions.jsonl."""
        out: dict[str, list[dict[str, Any]]] = {}
        for folder in self.folders:
            path = Path(folder) / "captions.jsonl"
            if not path.exists():
                continue
            with open(path, encoding="utf-8") as f:
                for line in f:
                    row = json.loads(line)
                    if row["id"] in self._index:
                        out.setdefault(row.pop("id"), []).append(row)
        return out

    def __repr__(self) -> str:
        split = f", split='{self.split}'" if self.split else ""
        return f"PreparedDataset({self.folders!r}{split}, models={len(self)})"


def _read_splits(folder: str) -> dict[str, list[str]]:
    path = Path(folder) / "splits.json"
    if not path.exists():
        raise Error(f"{folder} has no splits.json, so it has no '{{split}}' split; "
                    "leave out split= or prepare the folder again")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def to_numpy(graph: BRepGraph) -> dict[str, Any]:
    """The graph's arrays as NumPy arrays (views, no copies), under their shard names,
    plus "id", "unit" and "geometry_hash"."""
    out: dict[str, Any] = {k: v.numpy() for k, v in graph.tensors().items()}
    out.update(id=graph.id, unit=graph.unit, geometry_hash=graph.geometry_hash)
    return out


def to_pyg(graph: BRepGraph):
    """The graph as a ``torch_geometric.data.Data``: x = face_grids [F, 10, 10, 7],
    edge_index [2, E] int64, edge_attr = edge_grids [E, 10, 12], and every other array
    under its own name. Needs the torch-geometric package."""
    try:
        from torch_geometric.data import Data
    except ImportError as e:
        raise ImportError("to_pyg needs torch-geometric: pip install torch-geometric") from e
    t = graph.tensors()
    edge_index = torch.stack([t["edge_src"].long(), t["edge_dst"].long()])
    extra = {k: v for k, v in t.items() if k not in ("face_grids", "edge_grids", "edge_src",
                                                      "edge_dst")}
    return Data(x=t["face_grids"], edge_index=edge_index, edge_attr=t["edge_grids"],
                num_nodes=graph.num_faces, id=graph.id, **extra)


def to_dgl(graph: BRepGraph):
    """The graph as a ``dgl.DGLGraph`` with face arrays in ``ndata`` and edge arrays in
    ``edata`` (the per-model values in attributes of the same name). Needs dgl."""
    try:
        import dgl
    except ImportError as e:
        raise ImportError("to_dgl needs dgl: pip install dgl") from e
    t = graph.tensors()
    g = dgl.graph((t["edge_src"].long(), t["edge_dst"].long()), num_nodes=graph.num_faces)
    for k, v in t.items():
        if k.startswith("face_"):
            g.ndata[k] = v
        elif k.startswith("edge_") and k not in ("edge_src", "edge_dst"):
            g.edata[k] = v
    return g


BRepGraph.to_numpy = to_numpy  # type: ignore[attr-defined]
BRepGraph.to_pyg = to_pyg  # type: ignore[attr-defined]
BRepGraph.to_dgl = to_dgl  # type: ignore[attr-defined]
