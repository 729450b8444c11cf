"""Hostile policy checkpoints: every one is a ``CheckpointError`` naming the problem, found before any data is read.

Each file here is a valid checkpoint (``tiny_policy``: 146 -> 8 -> 18) with one member replaced, so
each test isolates one check. A loader that trusted the file (``np.load`` and index every array)
would decompress bombs, allocate what a header claims, or unpickle objects; these tests catch that.
"""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.core.checkpoint import CheckpointError, clear_policy_cache
from friday13_env.core.mlp import MLPPolicy
from friday13_env.friday.policy import read_friday_policy
from friday13_env.friday13.agents.policy import read_friday13_policy
from tests.core.test_policy import tiny_policy

Members = dict[str, bytes]
"""Zip member name (``"w0.npy"``) -> the member's bytes."""

DECLARED_BYTES = 4 * (146 + 146 * 8 + 8 + 8 * 18 + 18)
"""The float32 arrays the tiny policy's metadata declares (146 -> 8 -> 18)."""
BOMB_BYTES = 300_000_000


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_policy_cache()  # every test reads its file from disk


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def npy_header(descr: str, shape: tuple[int, ...], fortran_order: bool = False) -> bytes:
    """A ``.npy`` header (version 1.0) claiming any dtype and shape, without the data."""
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": fortran_order, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def raw_header(text: str, version: int = 1, length: int | None = None) -> bytes:
    """A ``.npy`` header with any text, version and declared length (numpy's writer would refuse most)."""
    encoded = text.encode("latin1")
    size = len(encoded) if length is None else length
    return b"\x93NUMPY" + bytes([version, 0]) + size.to_bytes(2 if version == 1 else 4, "little") + encoded


def valid_members(tmp_path: Path) -> Members:
    with zipfile.ZipFile(tiny_policy(tmp_path / "valid.npz")) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def metadata_npy(tmp_path: Path, **changes: Any) -> bytes:
    """The tiny policy's metadata with fields changed (``None`` values stay, ``...`` removes a field)."""
    metadata = json.loads(str(np.load(io.BytesIO(valid_members(tmp_path)["metadata.npy"]))))
    metadata.update(changes)
    return npy(np.array(json.dumps({key: value for key, value in metadata.items() if value is not ...})))


def write_checkpoint(path: Path, members: Members, compression: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def weights(tmp_path: Path) -> np.ndarray:
    return np.load(io.BytesIO(valid_members(tmp_path)["w0.npy"]))


class Unpickled(Exception):
    """Raised by unpickling :class:`Trap`: proof that a loader ran code from the file."""


def _spring() -> None:
    raise Unpickled("a checkpoint's pickle was loaded")


class Trap:
    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        return _spring, ()


def test_the_files_below_are_valid_but_for_their_one_change(tmp_path: Path) -> None:
    for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        path = write_checkpoint(tmp_path / f"rebuilt{compression}.npz", valid_members(tmp_path), compression)
        policy = read_friday13_policy(path)
        np.testing.assert_array_equal(policy.weights[0], weights(tmp_path))
    rewritten = write_checkpoint(
        tmp_path / "metadata.npz", {**valid_members(tmp_path), "metadata.npy": metadata_npy(tmp_path)}
    )
    assert read_friday13_policy(rewritten).metadata.hidden_sizes == [8]


def test_fortran_ordered_arrays_are_read_as_written(tmp_path: Path) -> None:
    """Exports from torch (``weight.T``) are Fortran-ordered; they must read back to the same matrix."""
    w0 = weights(tmp_path)
    path = write_checkpoint(tmp_path / "fortran.npz", {**valid_members(tmp_path), "w0.npy": npy(np.asfortranarray(w0))})
    read = read_friday13_policy(path).weights[0]
    np.testing.assert_array_equal(read, w0)
    assert read.flags.f_contiguous  # the stored layout is kept: matrix products then sum as with np.load


def _metadata(**changes: Any) -> Callable[[Path, Members], None]:
    def change(tmp_path: Path, members: Members) -> None:
        members["metadata.npy"] = metadata_npy(tmp_path, **changes)

    return change


def _member(name: str, make: Callable[[Path], bytes]) -> Callable[[Path, Members], None]:
    def change(tmp_path: Path, members: Members) -> None:
        members[name] = make(tmp_path)

    return change


def _without(name: str) -> Callable[[Path, Members], None]:
    def change(_tmp_path: Path, members: Members) -> None:
        del members[name]

    return change


HOSTILE: dict[str, tuple[Callable[[Path, Members], None], str]] = {
    # metadata
    "hidden_sizes null": (_metadata(hidden_sizes=None), r"corrupt metadata: bad field\(s\) \{'hidden_sizes': None\}"),
    "hidden size as text": (_metadata(hidden_sizes=["8"]), r"bad field\(s\) \{'hidden_sizes': \['8'\]\}"),
    "observation_size a bool": (_metadata(observation_size=True), r"bad field\(s\) \{'observation_size': True\}"),
    "too many layers": (_metadata(hidden_sizes=[8] * 40), r"bad field\(s\) \{'hidden_sizes': \[8, 8,"),
    "a huge declared network": (
        _metadata(hidden_sizes=[1 << 20, 1 << 20]),
        r"declares a network of 1,099,\d{3},\d{3},\d{3} parameters \(at most 20,000,000\)",
    ),
    "unknown metadata fields": (_metadata(evil=1, also=2), r"corrupt metadata: unknown fields \['also', 'evil'\]"),
    "format_version a bool": (
        _metadata(format_version=True),
        r"is format 'friday13-policy' version True; this version reads 'friday13-policy' version 1 \(an integer\)",
    ),
    "format_version a float": (
        _metadata(format_version=1.0),
        r"is format 'friday13-policy' version 1\.0; this version reads 'friday13-policy' version 1 \(an integer\)",
    ),
    "a missing metadata field": (_metadata(deck=...), r"corrupt metadata: .*missing 1 required .*'deck'"),
    "metadata a JSON list": (
        _member("metadata.npy", lambda _: npy(np.array("[1, 2]"))),
        "corrupt metadata: expected a JSON object, found list",
    ),
    "metadata a JSON string": (
        _member("metadata.npy", lambda _: npy(np.array('"policy"'))),
        "corrupt metadata: expected a JSON object, found str",
    ),
    "metadata not JSON": (_member("metadata.npy", lambda _: npy(np.array('{"deck": '))), "corrupt metadata: Expecting"),
    "metadata nested too deep": (_member("metadata.npy", lambda _: npy(np.array("[" * 200_000))), "corrupt metadata"),
    "metadata as numbers": (
        _member("metadata.npy", lambda _: npy(np.zeros(3))),
        r"metadata must be one text string, found float64 of shape \(3,\)",
    ),
    "metadata as bytes": (
        _member("metadata.npy", lambda _: npy(np.array(b"{}"))),
        r"metadata must be one text string, found \|S2 of shape \(\)",
    ),
    "metadata pickled": (
        _member("metadata.npy", lambda _: npy(np.array([Trap()], dtype=object))),
        r"array 'metadata' holds Python objects \(pickled data\)",
    ),
    "metadata claiming 400 MB": (
        _member("metadata.npy", lambda _: npy_header("<U100000000", ()) + b"{}"),
        r"array 'metadata' holds 2 bytes of data where a <U100000000 string needs 400,000,000",
    ),
    # arrays: dtypes
    "string weights": (
        _member("w0.npy", lambda _: npy(np.full((146, 8), "0.5"))),
        r"array 'w0' is <U3 \(146, 8\); the declared network \[146, 8, 18\] needs float32 \(146, 8\)",
    ),
    "pickled weights": (
        _member("w0.npy", lambda _: npy(np.array([[Trap()] * 8] * 146, dtype=object))),
        r"array 'w0' holds Python objects \(pickled data\)",
    ),
    "float64 weights": (
        _member("w0.npy", lambda tmp: npy(weights(tmp).astype(np.float64))),
        r"array 'w0' is float64 \(146, 8\); the declared network \[146, 8, 18\] needs float32 \(146, 8\)",
    ),
    "big-endian weights": (
        _member("w0.npy", lambda tmp: npy(weights(tmp).astype(">f4"))),
        r"array 'w0' is >f4 \(146, 8\)",
    ),
    "non-finite weights": (
        _member("b0.npy", lambda _: npy(np.full(8, np.nan, dtype=np.float32))),
        r"holds non-finite weights \(NaN or inf\)",
    ),
    # arrays: names
    "an extra array": (
        _member("extra.npy", lambda _: npy(np.zeros(3, dtype=np.float32))),
        r"arrays do not match the declared network \[146, 8, 18\] \(missing \[\], unexpected \['extra'\]\)",
    ),
    "a missing array": (_without("b1.npy"), r"\(missing \['b1'\], unexpected \[\]\)"),
    "an array twice": (
        _member("w0", lambda tmp: npy(weights(tmp))),
        r"holds arrays named \['w0'\] more than once",
    ),
    # arrays: headers and sizes
    "a header claiming 544 GiB": (
        _member("w0.npy", lambda _: npy_header("<f4", (146, 1_000_000_000)) + bytes(64)),
        r"array 'w0' is float32 \(146, 1000000000\); the declared network \[146, 8, 18\] needs float32 \(146, 8\)",
    ),
    "an extra array claiming 544 GiB": (
        _member("junk.npy", lambda _: npy_header("<f4", (146, 1_000_000_000)) + bytes(64)),
        r"unexpected \['junk'\]",
    ),
    "a header claiming a 4 GiB header": (
        _member("w0.npy", lambda _: raw_header("{}", version=2, length=0xFFFFFFFF)),
        r"array 'w0' has a header of 4,294,967,295 bytes \(at most 16,384\)",
    ),
    "a header that is code": (
        _member(
            "w0.npy",
            lambda _: raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': __import__('os').getpid()}\n"),
        ),
        r"array 'w0' has a bad header",
    ),
    "an unknown .npy version": (
        _member("w0.npy", lambda _: raw_header("{}", version=3)),
        r"array 'w0' has \.npy format version \(3, 0\); readable: 1\.0 and 2\.0",
    ),
    "not a .npy member": (_member("w0.npy", lambda _: b"PK\x03\x04 not numpy"), r"array 'w0' is not a \.npy array"),
    "a truncated header": (_member("w0.npy", lambda tmp: npy(weights(tmp))[:5]), r"array 'w0' is truncated \(5 of 8"),
    "truncated data": (
        _member("w0.npy", lambda tmp: npy(weights(tmp))[:-100]),
        r"array 'w0' holds 4,572 bytes of data where float32 \(146, 8\) needs 4,672: it is truncated or padded",
    ),
    "padded data": (
        _member("w0.npy", lambda tmp: npy(weights(tmp)) + bytes(100)),
        r"array 'w0' holds 4,772 bytes of data where float32 \(146, 8\) needs 4,672: it is truncated or padded",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_checkpoint_is_a_checkpoint_error_naming_the_problem(tmp_path: Path, case: str) -> None:
    change, message = HOSTILE[case]
    members = valid_members(tmp_path)
    change(tmp_path, members)
    path = write_checkpoint(tmp_path / "hostile.npz", members)
    with pytest.raises(CheckpointError, match=message):
        read_friday13_policy(path)


def test_data_corrupted_inside_the_archive_fails_its_checksum(tmp_path: Path) -> None:
    path = write_checkpoint(tmp_path / "corrupt.npz", valid_members(tmp_path))
    data = bytearray(path.read_bytes())
    position = data.index(np.ascontiguousarray(weights(tmp_path)).tobytes()) + 100
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"Bad CRC-32 for file 'w0\.npy'"):
        read_friday13_policy(path)


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_a_member_compressed_otherwise_than_numpy_writes_is_refused_unread(tmp_path: Path, compression: int) -> None:
    """``np.savez`` stores, ``np.savez_compressed`` deflates: any other method is refused before a member is read,
    valid or not (a corrupt LZMA stream raised a bare ``LZMAError``, a bad dictionary size ``MemoryError``)."""
    name = "ZIP_BZIP2" if compression == zipfile.ZIP_BZIP2 else "ZIP_LZMA"
    message = rf"member 'input_scale\.npy' is compressed \({name}\); allowed: ZIP_STORED or ZIP_DEFLATED"
    path = write_checkpoint(tmp_path / "valid.npz", valid_members(tmp_path), compression)
    with pytest.raises(CheckpointError, match=message):
        read_friday13_policy(path)
    data = bytearray(path.read_bytes())  # a corrupt stream: what the reader used to decompress
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("w0.npy")
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_length + extra_length + 9  # LZMA's header and properties kept
    data[start : start + info.compress_size - 9] = b"\xff" * (info.compress_size - 9)
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=message):
        read_friday13_policy(path)


LONG = "x" * 200_000
"""A file-controlled text far longer than any message should be."""


def _array_twice(name: str) -> Callable[[Path, Members], None]:
    def change(_tmp_path: Path, members: Members) -> None:
        members[name] = members[f"{name}.npy"] = b""

    return change


Reader = Callable[[Path], MLPPolicy]
LONG_VALUES: dict[str, tuple[Callable[[Path, Members], None], Reader]] = {
    "env_version": (_metadata(env_version=LONG), read_friday13_policy),
    "env_version, read as a Friday policy": (_metadata(env_version=LONG), read_friday_policy),
    "format": (_metadata(format=LONG), read_friday13_policy),
    "format_version": (_metadata(format_version=LONG), read_friday13_policy),
    "activation": (_metadata(activation=LONG), read_friday13_policy),
    "deck": (_metadata(deck=LONG), read_friday13_policy),
    "a bad field": (_metadata(hidden_sizes=[LONG]), read_friday13_policy),
    "an unknown field": (_metadata(**{LONG: 1}), read_friday13_policy),
    "observation_blocks": (_metadata(observation_blocks=[LONG]), read_friday13_policy),
    "input_features": (_metadata(input_features=LONG), read_friday13_policy),
    "an extra array": (
        _member(f"{LONG[:60_000]}.npy", lambda _: npy(np.zeros(3, dtype=np.float32))),
        read_friday13_policy,
    ),
    "an array twice": (_array_twice(LONG[:60_000]), read_friday13_policy),
}


@pytest.mark.parametrize("case", sorted(LONG_VALUES))
def test_a_long_value_from_the_file_is_cut_in_the_message(tmp_path: Path, case: str) -> None:
    change, read = LONG_VALUES[case]
    members = valid_members(tmp_path)
    change(tmp_path, members)
    path = write_checkpoint(tmp_path / "long.npz", members)
    with pytest.raises(CheckpointError) as error:
        read(path)
    message = str(error.value)
    assert len(message) < 1_000 and "characters" in message, message[:2_000]


def write_bomb(path: Path, members: Members, name: str, header: bytes) -> Path:
    """``members`` plus ``name``: ``header`` and then 300 MB of zeros, deflated to about 300 kB.

    Streamed 1 MiB at a time, so building it takes little memory (and under a second).
    """
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        with archive.open(name, "w", force_zip64=True) as handle:
            handle.write(header)
            zeros = bytes(1 << 20)
            for start in range(0, BOMB_BYTES, len(zeros)):
                handle.write(zeros[: min(len(zeros), BOMB_BYTES - start)])
    return path


@pytest.mark.parametrize(
    ("name", "header", "message"),
    [
        ("w0.npy", npy_header("<f4", (146, 8)), r"array 'w0' holds 300,000,000 bytes of data where float32 \(146, 8\)"),
        ("w0.npy", npy_header("<f4", (BOMB_BYTES // 4,)), r"array 'w0' is float32 \(75000000,\)"),
        ("junk.npy", npy_header("<f4", (BOMB_BYTES // 4,)), r"unexpected \['junk'\]"),
        ("metadata.npy", npy_header("<U75000000", ()), r"metadata of 300,000,\d{3} bytes \(at most 1,048,576\)"),
    ],
    ids=["w0 with a right header", "w0 as declared", "an extra array", "metadata"],
)
def test_a_decompression_bomb_is_refused_without_being_decompressed(
    tmp_path: Path, name: str, header: bytes, message: str
) -> None:
    members = valid_members(tmp_path)
    members.pop(name, None)
    path = write_bomb(tmp_path / "bomb.npz", members, name, header)
    assert path.stat().st_size < 2_000_000  # small on disk, 300 MB inflated
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match=message):
            read_friday13_policy(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Bounded by the declared network (and zip bookkeeping), not by what the file inflates to.
    assert peak < 4 * DECLARED_BYTES + (1 << 20), f"reading the bomb allocated {peak:,} bytes"
    assert peak < BOMB_BYTES / 100


def test_reading_a_valid_checkpoint_allocates_about_its_declared_size(tmp_path: Path) -> None:
    path = write_checkpoint(tmp_path / "valid.npz", valid_members(tmp_path), zipfile.ZIP_DEFLATED)
    tracemalloc.start()
    try:
        policy = read_friday13_policy(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert policy.nbytes == DECLARED_BYTES
    assert peak < 4 * DECLARED_BYTES + (1 << 20)


def test_a_pickled_array_is_never_unpickled(tmp_path: Path) -> None:
    with pytest.raises(Unpickled):  # the trap works: loading it with pickle allowed springs it
        np.load(io.BytesIO(npy(np.array([Trap()], dtype=object))), allow_pickle=True)
    messages = {
        "metadata.npy": r"array 'metadata' holds Python objects",
        "w0.npy": r"array 'w0' holds Python objects",
        "junk.npy": r"unexpected \['junk'\]",
    }
    for name, message in messages.items():
        members = {**valid_members(tmp_path), name: npy(np.array([Trap()], dtype=object))}
        with pytest.raises(CheckpointError, match=message):
            read_friday13_policy(write_checkpoint(tmp_path / "trap.npz", members))


def test_a_read_policy_cannot_be_written_into(tmp_path: Path) -> None:
    policy = read_friday13_policy(write_checkpoint(tmp_path / "valid.npz", valid_members(tmp_path)))
    for array in (policy.input_scale, *policy.weights, *policy.biases):
        assert array.dtype == np.float32
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0
    given = [np.ones((146, 8)), np.ones((8, 18))]
    built = MLPPolicy(given, [np.zeros(8), np.zeros(18)], np.ones(146), policy.metadata)
    given[0][0, 0] = 5.0  # the caller's arrays stay theirs: the policy holds read-only copies
    assert built.weights[0][0, 0] == 1.0 and not built.weights[0].flags.writeable
    np.testing.assert_array_equal(built.logits(np.ones(146, dtype=np.float32)), np.full(18, 146.0 * 8))
