"""``ppo_checkpoint``'s reading of ``last.pt`` and ``next.pt`` against hostile files, on a tiny network (no training
run): a zip bomb is refused before ``torch.load`` inflates it, a checkpoint's timesteps must be the plain integer
``save_checkpoint`` writes, and a refused checkpoint loads nothing into the networks or the optimizer."""

from __future__ import annotations

import copy
import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training.actor_critic import ActorCritic  # noqa: E402
from friday13_training.ppo_checkpoint import (  # noqa: E402
    CHECKPOINT,
    NEXT_CHECKPOINT,
    load_checkpoint,
    recover_checkpoint,
    save_checkpoint,
)
from friday13_training.runs import RunError  # noqa: E402

TIMESTEPS = 128
BOMB_FLOATS = 1 << 20
"""The bomb's tensor: 4 MiB of zeros, deflated to a few kB (enough to tell a refusal from a read, cheap either way)."""


def tiny_model() -> tuple[ActorCritic, torch.optim.Optimizer]:
    """A 4 -> 4 -> 3 actor and its critic, with Adam's moments filled by one step."""
    torch.manual_seed(0)
    model = ActorCritic(np.ones(4, dtype=np.float32), np.ones(2, dtype=np.float32), 3, [4], "tanh")
    optimizer = torch.optim.Adam(model.parameters())
    sum(parameter.sum() for parameter in model.parameters()).backward()
    optimizer.step()
    return model, optimizer


def states(model: ActorCritic, optimizer: torch.optim.Optimizer) -> tuple[dict[str, Any], dict[str, Any]]:
    return copy.deepcopy(model.state_dict()), copy.deepcopy(optimizer.state_dict())


def same(a: Any, b: Any) -> bool:
    """Whether two nested states hold equal values (tensors compared element by element)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def checkpoint_bytes(**changes: Any) -> bytes:
    """``save_checkpoint``'s file of the tiny model at ``TIMESTEPS``, with entries of its state replaced."""
    model, optimizer = tiny_model()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "timesteps": TIMESTEPS, **changes}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def deflated(data: bytes) -> bytes:
    """The same torch file with every member DEFLATE-compressed: ``torch.load`` reads it, inflating each whole."""
    source, buffer = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info in source.infolist():
            archive.writestr(info.filename, source.read(info), compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def bomb() -> bytes:
    return deflated(checkpoint_bytes(model={"w": torch.zeros(BOMB_FLOATS)}))


def claiming(data: bytes, sizes: dict[str, int]) -> bytes:
    """The torch file with the central directory's uncompressed size of members ending in a key of ``sizes`` changed:
    what a hostile file says of members it overlaps or does not hold."""
    data = bytearray(data)
    position = data.find(b"PK\x01\x02")
    while position >= 0:
        name_length = struct.unpack_from("<H", data, position + 28)[0]
        name = bytes(data[position + 46 : position + 46 + name_length]).decode()
        for suffix, size in sizes.items():
            if name.endswith(suffix):
                struct.pack_into("<I", data, position + 24, size)
        position = data.find(b"PK\x01\x02", position + 46)
    return bytes(data)


def run_with(tmp_path: Path, name: str, data: bytes, recorded: int = TIMESTEPS) -> Path:
    """A run directory holding ``data`` as ``name`` and a record of ``recorded`` timesteps."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    (run_dir / name).write_bytes(data)
    (run_dir / "progress.json").write_text(json.dumps({"timesteps": recorded}))
    return run_dir


@pytest.fixture
def torch_loads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What ``torch.load`` is asked to read (it reads nothing: a bomb stays unread even if the checks miss it)."""
    calls: list[Any] = []

    def refused(source: Any, *_arguments: Any, **_options: Any) -> None:
        calls.append(source)
        raise AssertionError("torch.load read a file that should have been refused before")

    monkeypatch.setattr(torch, "load", refused)
    return calls


def test_a_saved_checkpoint_loads_back_and_a_finished_next_pt_is_kept(tmp_path: Path) -> None:
    """The checks below let every file ``save_checkpoint`` writes through."""
    model, optimizer = tiny_model()
    save_checkpoint(tmp_path / CHECKPOINT, model, optimizer, TIMESTEPS)
    fresh_model, fresh_optimizer = tiny_model()
    torch.nn.init.zeros_(fresh_model.critic[0].weight)
    load_checkpoint(tmp_path, fresh_model, fresh_optimizer, "cpu", TIMESTEPS)
    assert same(states(fresh_model, fresh_optimizer), states(model, optimizer))
    run_dir = run_with(tmp_path, NEXT_CHECKPOINT, (tmp_path / CHECKPOINT).read_bytes())
    recover_checkpoint(run_dir, {"timesteps": 0})
    assert (run_dir / CHECKPOINT).is_file() and not (run_dir / NEXT_CHECKPOINT).exists()


def test_the_bomb_below_is_a_torch_file_that_inflates() -> None:
    data = bomb()
    assert len(data) < 100_000  # a few kB on disk, 4 MiB once read
    state = torch.load(io.BytesIO(data), weights_only=True)
    assert state["model"]["w"].numel() == BOMB_FLOATS and state["timesteps"] == TIMESTEPS


HOSTILE_ZIPS = {
    "a DEFLATE bomb": (bomb, r"'archive/data.pkl' is compressed \(ZIP_DEFLATED\); .* ZIP_STORED"),
    "a member larger than the file": (
        lambda: claiming(checkpoint_bytes(), {"data/0": 1 << 30}),
        r"its members hold 1,07\d,\d{3},\d{3} bytes in all, more than the file's \d{1,3},\d{3}",
    ),
    "members overlapping": (
        lambda: claiming(checkpoint_bytes(), dict.fromkeys(["data/0", "data/1"], len(checkpoint_bytes()) * 6 // 10)),
        r"its members hold \d{1,3},\d{3} bytes in all, more than the file's \d{1,3},\d{3}",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ZIPS))
def test_resume_refuses_a_zip_bomb_before_torch_reads_it(tmp_path: Path, torch_loads: list[Any], case: str) -> None:
    make, message = HOSTILE_ZIPS[case]
    run_dir = run_with(tmp_path, CHECKPOINT, make())
    model, optimizer = tiny_model()
    with pytest.raises(RunError, match=rf"--resume: .*last\.pt is damaged .*{message}"):
        load_checkpoint(run_dir, model, optimizer, "cpu", TIMESTEPS)
    assert torch_loads == []


@pytest.mark.parametrize("case", sorted(HOSTILE_ZIPS))
def test_a_zip_bomb_as_next_pt_is_dropped_unread(tmp_path: Path, torch_loads: list[Any], case: str) -> None:
    """Every start of ``train_ppo`` recovers ``next.pt``: a bomb there (of the record's timesteps) is dropped as
    damaged, never inflated."""
    run_dir = run_with(tmp_path, NEXT_CHECKPOINT, HOSTILE_ZIPS[case][0]())
    recover_checkpoint(run_dir, {"timesteps": 0})
    assert torch_loads == []
    assert not (run_dir / NEXT_CHECKPOINT).exists() and not (run_dir / CHECKPOINT).exists()


def test_a_checkpoint_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    """``torch.save``'s legacy format (before torch 1.6) is not read: ``save_checkpoint`` never wrote it."""
    buffer = io.BytesIO()
    torch.save({"timesteps": TIMESTEPS}, buffer, _use_new_zipfile_serialization=False)
    run_dir = run_with(tmp_path, CHECKPOINT, buffer.getvalue())
    with pytest.raises(RunError, match=r"last\.pt is damaged .*\(BadZipFile: File is not a zip file\)"):
        load_checkpoint(run_dir, *tiny_model(), "cpu", TIMESTEPS)


BAD_TIMESTEPS = {
    "a tensor of two": (torch.tensor([TIMESTEPS, TIMESTEPS]), TIMESTEPS, r"tensor\(\[128, 128\]\)"),
    "a float": (float(TIMESTEPS), TIMESTEPS, r"128\.0"),
    "a float tensor": (torch.tensor(float(TIMESTEPS)), TIMESTEPS, r"tensor\(128\.\)"),
    "an int tensor": (torch.tensor(TIMESTEPS), TIMESTEPS, r"tensor\(128\)"),
    "a bool": (True, 1, "True"),
    "a negative int": (-1, -1, "-1"),
    "a text": (str(TIMESTEPS), TIMESTEPS, "'128'"),
}


@pytest.mark.parametrize("case", sorted(BAD_TIMESTEPS))
def test_resume_refuses_timesteps_that_are_not_a_plain_count(tmp_path: Path, case: str) -> None:
    """``save_checkpoint`` stores a Python ``int``: anything else, even equal to the record's, is damage."""
    stored, recorded, shown = BAD_TIMESTEPS[case]
    run_dir = run_with(tmp_path, CHECKPOINT, checkpoint_bytes(timesteps=stored))
    model, optimizer = tiny_model()
    before = states(model, optimizer)
    with pytest.raises(
        RunError, match=rf"last\.pt is damaged: its timesteps are {shown}, not a non-negative integer \(an int\)"
    ):
        load_checkpoint(run_dir, model, optimizer, "cpu", recorded)
    assert same(states(model, optimizer), before)


@pytest.mark.parametrize("case", sorted(BAD_TIMESTEPS))
def test_a_next_pt_with_timesteps_that_are_not_a_plain_count_is_dropped(tmp_path: Path, case: str) -> None:
    stored, recorded, _ = BAD_TIMESTEPS[case]
    run_dir = run_with(tmp_path, NEXT_CHECKPOINT, checkpoint_bytes(timesteps=stored), max(recorded, 0))
    recover_checkpoint(run_dir, {"timesteps": 0})
    assert not (run_dir / NEXT_CHECKPOINT).exists() and not (run_dir / CHECKPOINT).exists()


@pytest.mark.parametrize("part", ["model", "optimizer", "timesteps"])
def test_a_refused_checkpoint_loads_nothing_into_the_networks_or_the_optimizer(tmp_path: Path, part: str) -> None:
    """Non-finite numbers and another checkpoint's timesteps are found before any state is loaded."""
    model, optimizer = tiny_model()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "timesteps": TIMESTEPS}
    if part == "model":
        state["model"]["critic.0.weight"] = torch.full_like(state["model"]["critic.0.weight"], float("nan"))
    elif part == "optimizer":
        state["optimizer"]["state"][0]["exp_avg"] = torch.full_like(state["optimizer"]["state"][0]["exp_avg"], np.inf)
    else:
        state["timesteps"] = 2 * TIMESTEPS
    buffer = io.BytesIO()
    torch.save(state, buffer)
    run_dir = run_with(tmp_path, CHECKPOINT, buffer.getvalue())
    fresh_model, fresh_optimizer = tiny_model()
    torch.nn.init.zeros_(fresh_model.critic[0].weight)
    before = states(fresh_model, fresh_optimizer)
    message = "non-finite numbers" if part != "timesteps" else r"holds 256 timesteps but .* records 128"
    with pytest.raises(RunError, match=message):
        load_checkpoint(run_dir, fresh_model, fresh_optimizer, "cpu", TIMESTEPS)
    assert same(states(fresh_model, fresh_optimizer), before)
