"""Policy checkpoints: a safe file format, its hardened reader and a bounded cache of what was read.

A policy checkpoint is an ``.npz`` file holding only float32 arrays and one JSON metadata string.
The metadata pins what the weights were trained for: the environment version, the deck, the
observation layout (size and block names), the action count and the network's shape. Reading is
safe against hostile files: nothing is unpickled (so opening a file never executes code), and every
array header (dtype, shape, and the member's inflated size) is checked against the declared network
before any data is decompressed, so memory stays bounded by the declared network's size (itself
capped) whatever the file claims. ``read_policy`` caches a read policy (:class:`~friday13_env.core.mlp.MLPPolicy`,
immutable) per unchanged file, so every agent made from one checkpoint shares one copy.

This module is game-agnostic: each game passes ``read_policy`` the layout its environment expects
(``friday13_env.friday13.agents.policy``, ``friday13_env.friday.policy``), and a file made for
another layout is refused with an error that says what differs, instead of playing garbage. Files
without derived inputs leave ``input_features`` out, so older versions read them.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import stat
import threading
import zipfile
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import IO, Any

import numpy as np

from friday13_env.core.files import atomic_write
from friday13_env.core.mlp import (
    ACTIVATIONS,
    FORMAT,
    FORMAT_VERSION,
    RAW_INPUT,
    FeaturesOf,
    MLPPolicy,
    PolicyMetadata,
    observation_only,
    read_only,
)
from friday13_env.core.specs import SHOWN_CHARACTERS, shown

MAX_PARAMETERS = 20_000_000
"""The largest network a checkpoint may declare (80 MB of float32): a bound on what reading allocates."""


MAX_LAYERS = 32


MAX_METADATA_BYTES = 1 << 20


MAX_HEADER_BYTES = 1 << 14
"""The longest ``.npy`` header read (numpy itself refuses headers over 10,000 characters)."""


CACHE_ENTRIES = 32


CACHE_BYTES = 256 << 20
"""Bounds of ``read_policy``'s cache: at most this many policies, and this many bytes of weights."""


_FLOAT32 = np.dtype("<f4")


_HEADER_LENGTH_BYTES = {(1, 0): 2, (2, 0): 4}


NPZ_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
"""How a policy checkpoint's members may be compressed: as ``np.savez`` (stored) and ``np.savez_compressed``
(deflated) write them. The reader catches these methods' errors and bounds what they inflate (``check_data_size``)."""


_ZIP_COMPRESSION_NAMES = {
    zipfile.ZIP_STORED: "ZIP_STORED",
    zipfile.ZIP_DEFLATED: "ZIP_DEFLATED",
    zipfile.ZIP_BZIP2: "ZIP_BZIP2",
    zipfile.ZIP_LZMA: "ZIP_LZMA",
}


ExpectedLayout = Callable[["PolicyMetadata"], dict[str, Any]]
"""A game's check of a checkpoint: the metadata fields its environment needs, or a ``ValueError``."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for another environment layout."""


def metadata_json(metadata: PolicyMetadata) -> str:
    """The stored metadata: ``input_features`` only when the network has some, so that files without derived
    inputs stay readable by versions that predate the field."""
    fields_ = asdict(metadata)
    if fields_["input_features"] == RAW_INPUT:
        del fields_["input_features"]
    return json.dumps(fields_)


def save_policy(
    path: str | Path,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    input_scale: np.ndarray,
    metadata: PolicyMetadata,
) -> None:
    """Write a checkpoint atomically (temporary file + rename), so a crash never leaves half a file."""
    if len(weights) != len(biases) or not weights:
        raise ValueError("need one bias per weight matrix, and at least one layer")
    arrays: dict[str, Any] = {"input_scale": np.asarray(input_scale, dtype=np.float32)}
    for index, (weight, bias) in enumerate(zip(weights, biases, strict=True)):
        arrays[f"w{index}"] = np.asarray(weight, dtype=np.float32)
        arrays[f"b{index}"] = np.asarray(bias, dtype=np.float32)
    arrays["metadata"] = np.array(metadata_json(metadata))
    atomic_write(path, lambda handle: np.savez(handle, **arrays))


def read_policy(
    path: str | Path, expected_layout: ExpectedLayout, features_of: FeaturesOf = observation_only
) -> MLPPolicy:
    """Load and validate a checkpoint; every problem becomes a ``CheckpointError`` saying what.

    ``expected_layout(metadata)`` returns the metadata fields the caller's environment needs (or raises
    ``ValueError`` for a file made for another environment); they are compared before any weight is read.
    ``features_of(metadata)`` gives the derived inputs the file declares (a ``ValueError`` for names the game
    does not offer); their size is part of the network's first layer.

    A file read before is not read again while it is unchanged: the policy comes from a small cache
    keyed by the file's resolved path, identity, size and modification time (and ``expected_layout``, ``features_of``),
    so making many agents from one checkpoint costs one read. The policy's arrays are read-only, so
    every agent can share it; :func:`clear_policy_cache` forgets the cached policies.
    """
    path = Path(path)
    try:
        status = path.stat()
    except (OSError, ValueError):
        status = None
    if status is None or not stat.S_ISREG(status.st_mode):
        raise CheckpointError(f"no policy checkpoint at {str(path)!r}")
    cached = _POLICY_CACHE.get(_cache_key(path, status, expected_layout, features_of))
    if cached is not None:
        return cached
    try:
        with path.open("rb") as handle:
            key = _cache_key(path, os.fstat(handle.fileno()), expected_layout, features_of)  # the file actually read
            with zipfile.ZipFile(handle) as archive:
                policy = _read_archive(archive, path, expected_layout, features_of)
    except (OSError, zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError, zlib.error) as error:
        raise CheckpointError(f"{path} is not a readable policy checkpoint (.npz): {error}") from error
    _POLICY_CACHE.put(key, policy)
    return policy


def compression_problem(archive: zipfile.ZipFile, allowed: Sequence[int]) -> str | None:
    """What is wrong with the compression of ``archive``'s members (the first member compressed otherwise than
    ``allowed``), or ``None``: checked before any member is read, since another method's decompressor has errors and
    costs a reader does not bound (LZMA's corrupt streams, its dictionary sizes). Torch checkpoints use it too."""
    for info in archive.infolist():
        if info.compress_type not in allowed:
            method = _ZIP_COMPRESSION_NAMES.get(info.compress_type, f"method {info.compress_type}")
            names = " or ".join(_ZIP_COMPRESSION_NAMES[compression] for compression in allowed)
            return f"member {shown(info.filename)} is compressed ({method}); allowed: {names}"
    return None


def clear_policy_cache() -> None:
    """Forget every cached policy, so that the next ``read_policy`` of each file reads it from disk."""
    _POLICY_CACHE.clear()


CacheKey = tuple[str, int, int, int, int, ExpectedLayout, FeaturesOf]


def _cache_key(
    path: Path, status: os.stat_result, expected_layout: ExpectedLayout, features_of: FeaturesOf
) -> CacheKey:
    return (
        str(path.resolve()),
        status.st_dev,
        status.st_ino,
        status.st_size,
        status.st_mtime_ns,
        expected_layout,
        features_of,
    )


class _PolicyCache:
    """A thread-safe LRU of read policies, bounded in entries and in bytes of weights."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._policies: OrderedDict[CacheKey, MLPPolicy] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: CacheKey) -> MLPPolicy | None:
        with self._lock:
            policy = self._policies.get(key)
            if policy is not None:
                self._policies.move_to_end(key)
            return policy

    def put(self, key: CacheKey, policy: MLPPolicy) -> None:
        with self._lock:
            self._policies[key] = policy
            self._policies.move_to_end(key)
            total = sum(cached.nbytes for cached in self._policies.values())
            while len(self._policies) > 1 and (len(self._policies) > self.max_entries or total > self.max_bytes):
                _, evicted = self._policies.popitem(last=False)
                total -= evicted.nbytes

    def clear(self) -> None:
        with self._lock:
            self._policies.clear()


_POLICY_CACHE = _PolicyCache(CACHE_ENTRIES, CACHE_BYTES)


def _read_archive(
    archive: zipfile.ZipFile, path: Path, expected_layout: ExpectedLayout, features_of: FeaturesOf
) -> MLPPolicy:
    problem = compression_problem(archive, NPZ_COMPRESSIONS)
    if problem is not None:
        raise CheckpointError(f"{path}: {problem}")
    infos = archive.infolist()
    members = {info.filename.removesuffix(".npy"): info for info in infos}
    if len(members) != len(infos):
        counts = Counter(info.filename.removesuffix(".npy") for info in infos)
        twice = sorted(name for name, count in counts.items() if count > 1)
        raise CheckpointError(
            f"{path} holds arrays named {shown(twice[:10])} more than once: it is not a {FORMAT} checkpoint"
        )
    if "metadata" not in members:
        raise CheckpointError(f"{path} has no metadata: it is not a {FORMAT} checkpoint")
    metadata = _read_metadata(archive, members["metadata"], path)
    try:
        expected = expected_layout(metadata)
    except ValueError as error:
        raise CheckpointError(f"{path}: {error}") from error
    stored = {name: getattr(metadata, name) for name in expected}
    if stored != expected:
        # The file's value is cut a little past the length of this version's, so that where they differ shows.
        differences = ", ".join(
            f"{name}: file {shown(stored[name], len(repr(expected[name])) + SHOWN_CHARACTERS)} vs this version "
            f"{expected[name]!r}"
            for name in expected
            if stored[name] != expected[name]
        )
        raise CheckpointError(
            f"{path} was trained for another observation/action layout ({differences}); retrain or use a "
            "matching friday13-env version"
        )
    try:
        features = features_of(metadata)
    except ValueError as error:
        raise CheckpointError(f"{path}: {error}") from error
    inputs = metadata.observation_size + (0 if features is None else features.size)
    sizes = [inputs, *metadata.hidden_sizes, metadata.num_actions]
    parameters = parameter_count(sizes)  # derived inputs widen the first layer
    if parameters > MAX_PARAMETERS:
        raise CheckpointError(f"{path} declares a network of {parameters:,} parameters (at most {MAX_PARAMETERS:,})")
    shapes: dict[str, tuple[int, ...]] = {"input_scale": (inputs,)}
    for index in range(len(sizes) - 1):
        shapes[f"w{index}"] = (sizes[index], sizes[index + 1])
        shapes[f"b{index}"] = (sizes[index + 1],)
    unexpected = sorted(set(members) - set(shapes) - {"metadata"})
    missing = sorted(set(shapes) - set(members))
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: arrays do not match the declared network {sizes} (missing {missing}, unexpected "
            f"{shown(unexpected)})"
        )
    # Every header first, then the data: a wrong array costs a header read, not a decompression.
    for name, shape in shapes.items():
        handle, _ = _open_array(archive, members[name], shape, sizes, path)
        handle.close()
    arrays = {name: _read_array(archive, members[name], shape, sizes, path) for name, shape in shapes.items()}
    if not all(np.all(np.isfinite(array)) for array in arrays.values()):
        raise CheckpointError(f"{path} holds non-finite weights (NaN or inf)")
    layers = len(sizes) - 1
    weights = [arrays[f"w{index}"] for index in range(layers)]
    biases = [arrays[f"b{index}"] for index in range(layers)]
    return MLPPolicy(weights, biases, arrays["input_scale"], metadata, features)


def parameter_count(sizes: Sequence[int]) -> int:
    """Weights and biases of an MLP with these layer widths (inputs, hidden layers, outputs): what ``MAX_PARAMETERS``
    caps, so that a training run can check its network against the cap before it builds it."""
    return sum((a + 1) * b for a, b in itertools.pairwise(sizes))


def _read_metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> PolicyMetadata:
    if info.file_size > MAX_METADATA_BYTES:
        raise CheckpointError(f"{path}: metadata of {info.file_size:,} bytes (at most {MAX_METADATA_BYTES:,})")
    with archive.open(info) as handle:
        dtype, shape, _, data_offset = array_header(handle, path, "metadata")
        if dtype.kind != "U" or shape != ():
            raise CheckpointError(f"{path}: metadata must be one text string, found {dtype} of shape {shape}")
        check_data_size(info, data_offset, dtype.itemsize, f"a {dtype} string", path, "metadata")
        data = _read_exactly(handle, dtype.itemsize, path, "metadata")
    try:
        text = str(np.frombuffer(data, dtype=dtype)[0])
        raw = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise CheckpointError(f"{path} has corrupt metadata: {error}") from error
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path} has corrupt metadata: expected a JSON object, found {type(raw).__name__}")
    known = {spec.name for spec in fields(PolicyMetadata)}
    if set(raw) - known:
        raise CheckpointError(f"{path} has corrupt metadata: unknown fields {shown(sorted(set(raw) - known))}")
    try:
        metadata = PolicyMetadata(**raw)
    except TypeError as error:
        raise CheckpointError(f"{path} has corrupt metadata: {error}") from error
    _check_metadata(metadata, path)
    return metadata


def _check_metadata(metadata: PolicyMetadata, path: Path) -> None:
    """Types and bounds of every field, so that nothing later meets a ``None`` or a string where a size should be."""
    version = metadata.format_version
    if metadata.format != FORMAT or type(version) is not int or version != FORMAT_VERSION:  # True == 1 == 1.0
        raise CheckpointError(
            f"{path} is format {shown(metadata.format)} version {shown(version)}; "
            f"this version reads {FORMAT!r} version {FORMAT_VERSION} (an integer)"
        )
    checks = {
        "deck": isinstance(metadata.deck, str),
        "env_version": isinstance(metadata.env_version, str),
        "description": isinstance(metadata.description, str),
        "input_features": isinstance(metadata.input_features, str),
        "observation_blocks": isinstance(metadata.observation_blocks, list)
        and all(isinstance(block, str) for block in metadata.observation_blocks),
        "training": metadata.training is None or isinstance(metadata.training, dict),
        "observation_size": _is_size(metadata.observation_size),
        "num_actions": _is_size(metadata.num_actions),
        "hidden_sizes": isinstance(metadata.hidden_sizes, list)
        and len(metadata.hidden_sizes) < MAX_LAYERS
        and all(_is_size(size) for size in metadata.hidden_sizes),
    }
    wrong = [name for name, ok in checks.items() if not ok]
    if wrong:
        values = {name: getattr(metadata, name) for name in wrong}
        raise CheckpointError(
            f"{path} has corrupt metadata: bad field(s) {shown(values)} (sizes are positive integers, "
            f"at most {MAX_LAYERS - 1} hidden layers; texts are strings)"
        )
    if metadata.activation not in ACTIVATIONS:
        raise CheckpointError(f"{path}: unknown activation {shown(metadata.activation)}; allowed: {list(ACTIVATIONS)}")


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1 << 20


def array_header(handle: IO[bytes], path: Path, name: str) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """``(dtype, shape, fortran_order, data offset)`` of a ``.npy`` member, reading only its header.

    The header's length is checked before the header is read, so a file claiming a huge header costs nothing.
    """
    preamble = _read_exactly(handle, 8, path, name)  # magic string and format version
    try:
        version = np.lib.format.read_magic(io.BytesIO(preamble))
    except ValueError as error:
        raise CheckpointError(f"{path}: array {name!r} is not a .npy array: {error}") from error
    if version not in _HEADER_LENGTH_BYTES:
        raise CheckpointError(f"{path}: array {name!r} has .npy format version {version}; readable: 1.0 and 2.0")
    length_bytes = _read_exactly(handle, _HEADER_LENGTH_BYTES[version], path, name)
    length = int.from_bytes(length_bytes, "little")
    if length > MAX_HEADER_BYTES:
        raise CheckpointError(f"{path}: array {name!r} has a header of {length:,} bytes (at most {MAX_HEADER_BYTES:,})")
    header = io.BytesIO(length_bytes + _read_exactly(handle, length, path, name))
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    try:
        shape, fortran_order, dtype = read_header(header)
    except (ValueError, TypeError, KeyError, SyntaxError, RecursionError, MemoryError) as error:
        raise CheckpointError(f"{path}: array {name!r} has a bad header: {error}") from error
    if dtype.hasobject:
        raise CheckpointError(
            f"{path}: array {name!r} holds Python objects (pickled data); only numbers and text are allowed"
        )
    return dtype, tuple(shape), bool(fortran_order), len(preamble) + len(length_bytes) + length


def _read_exactly(handle: IO[bytes], size: int, path: Path, name: str) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise CheckpointError(f"{path}: array {name!r} is truncated ({len(data):,} of {size:,} bytes)")
    return data


def check_data_size(info: zipfile.ZipInfo, offset: int, size: int, what: str, path: Path, name: str) -> None:
    """The member holds exactly its header and ``size`` bytes: checked before any data is decompressed."""
    if info.file_size != offset + size:
        raise CheckpointError(
            f"{path}: array {name!r} holds {info.file_size - offset:,} bytes of data where {what} needs "
            f"{size:,}: it is truncated or padded"
        )


def _open_array(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, shape: tuple[int, ...], sizes: list[int], path: Path
) -> tuple[IO[bytes], bool]:
    """The member opened past its header, after checking dtype, shape and size against the declared network."""
    name = info.filename.removesuffix(".npy")
    handle = archive.open(info)
    try:
        dtype, found, fortran_order, offset = array_header(handle, path, name)
        if found != shape or dtype != _FLOAT32:
            raise CheckpointError(
                f"{path}: array {name!r} is {dtype} {found}; the declared network {sizes} needs float32 {shape}"
            )
        check_data_size(info, offset, _FLOAT32.itemsize * math.prod(shape), f"float32 {shape}", path, name)
    except BaseException:
        handle.close()
        raise
    return handle, fortran_order


def _read_array(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, shape: tuple[int, ...], sizes: list[int], path: Path
) -> np.ndarray:
    """One read-only float32 array of exactly ``shape``; nothing larger than that is ever decompressed."""
    name = info.filename.removesuffix(".npy")
    handle, fortran_order = _open_array(archive, info, shape, sizes, path)
    with handle:
        data = _read_exactly(handle, _FLOAT32.itemsize * math.prod(shape), path, name)
    array = np.frombuffer(data, dtype=_FLOAT32)  # a read-only view of immutable bytes: no copy
    # Keep the stored memory layout (torch exports are Fortran-ordered): numpy's matrix products sum in an
    # order that depends on it, so a re-laid-out copy would move logits in their last bits.
    array = array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)
    return read_only(array)
