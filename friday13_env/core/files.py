"""Output files: atomic writes, and the check that an output path can be written before a long run.

``atomic_write`` writes through a temporary file in the target's folder and one rename, so a reader
never sees half a file and a failed write leaves an older file as it was; the temporary file's name is short
(``.XXXXXXXX.tmp``), so that any name the file system takes can be written. ``output_problem`` finds, without
creating anything, why a path could not be written (a name too long for the file system included, which a
check would otherwise meet as an exception); each tool words the answer its own way.
``run_writing`` runs a command that writes outputs so that Ctrl-C or SIGTERM ends it with one line
saying what was written, not a traceback.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from friday13_env.core.checks import printable
from friday13_env.core.signals import Interrupted, signals_interrupt

__all__ = [
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "name_problem",
    "output_in_folder",
    "output_inside",
    "output_problem",
    "run_writing",
]


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], object], *, fsync: bool = False) -> None:
    """``write(handle)`` to a temporary file beside ``path`` (missing folders are created), then one rename.

    The result is world-readable (0o644: temporary files are private, outputs are meant to be shared);
    with ``fsync`` the data reaches the disk before the rename. If anything fails, even an interrupt,
    the temporary file is removed and ``path`` is left as it was. The temporary file's name does not hold
    ``path``'s (``.XXXXXXXX.tmp``, 13 characters): a name within a few bytes of the file system's limit is
    written too, not refused after the work that made it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".", suffix=".tmp", delete=False) as handle:
            temporary = Path(handle.name)
            write(handle)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes, *, fsync: bool = False) -> None:
    """``atomic_write`` of ``data``."""
    atomic_write(path, lambda handle: handle.write(data), fsync=fsync)


def atomic_write_text(path: str | Path, text: str, *, fsync: bool = False) -> None:
    """``atomic_write`` of ``text`` as UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync)


def read_capped(
    path: str | Path,
    limit: int,
    what: str | None,
    error: type[Exception] = ValueError,
    *,
    raise_missing: bool = False,
) -> bytes:
    """The bytes of the regular file at ``path``, or ``error`` naming it as ``what``: not a regular file (a folder, a
    device or a pipe, a link to one included, which report no size a cap can trust), over ``limit`` bytes (no more
    than ``limit + 1`` are read), or not readable. ``what`` None leaves the file unnamed, the bare reason, for a
    caller that names it in its own words; with ``raise_missing`` a missing file is the ``FileNotFoundError`` itself,
    for a caller that words a missing file apart from a damaged one."""
    path = Path(path)
    named = printable(str(path))  # a file's name from elsewhere never drives the terminal

    def refused(reason: str, verb: str = "is ") -> Exception:
        return error(reason if what is None else f"{what} {named} {verb}{reason}")

    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise refused("not a regular file; not read")
        if info.st_size > limit:
            raise refused(f"{info.st_size} bytes, over the {limit}-byte limit; not read")
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as failure:
        if raise_missing and isinstance(failure, FileNotFoundError):
            raise
        raise refused(f"cannot be read: {failure.strerror or failure}", verb="") from None
    if len(raw) > limit:
        raise refused(f"over the {limit}-byte limit; not read")
    return raw


DEFAULT_NAME_MAX = 255
"""The longest file name, in bytes, where the file system does not say (``PC_NAME_MAX``): POSIX file systems'."""


def name_max(folder: Path) -> int:
    """The longest file name (in bytes) the file system of ``folder``, an existing folder, takes."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no such setting here, or no pathconf at all (Windows)
        return DEFAULT_NAME_MAX


def _exists(path: Path) -> bool:
    """``path.exists()``, where a path the system cannot even look up (a name too long) does not exist."""
    try:
        return path.exists()
    except OSError:
        return False


def name_problem(path: str | Path, *, suffix: str = "") -> OSError | None:
    """An ``OSError`` (``ENAMETOOLONG``, ``filename`` ``path``) when a name on ``path`` is longer than its file
    system takes, or None; nothing is created. The names checked are those of the folders still to be created and
    ``path``'s own, with ``suffix`` added: the longest a writer adds to it (``OUT.partial``). The limit is that of the
    nearest existing folder (``PC_NAME_MAX``, else ``DEFAULT_NAME_MAX``). Checked before a long run: such a name made
    the checks themselves raise (``is_dir()``), or the run fail when it wrote its results."""
    path = Path(path)
    folder = path.parent
    while not _exists(folder) and folder != folder.parent:
        folder = folder.parent
    limit = name_max(folder if folder.is_dir() else Path("."))
    missing = [part for part in path.parent.parts[len(folder.parts) :] if part not in ("", ".", "..")]
    for part in missing:
        size = len(os.fsencode(part))
        if size > limit:
            return _too_long(path, f"a folder name on its path is {size} bytes", limit)
    size = len(os.fsencode(path.name))
    if size > limit:
        return _too_long(path, f"its name is {size} bytes", limit)
    if suffix and size + len(os.fsencode(suffix)) > limit:
        added = size + len(os.fsencode(suffix))
        return _too_long(path, f"its name is {added} bytes with the {suffix} written beside it", limit)
    return None


def _too_long(path: Path, what: str, limit: int) -> OSError:
    reason = f"{what}, over the {limit} bytes a file name may have there; give a shorter name"
    return OSError(errno.ENAMETOOLONG, reason, str(path))


def output_problem(path: str | Path, *, directory: bool = False, suffix: str = "") -> OSError | None:
    """Why ``path`` (a file, or with ``directory`` a folder) cannot be written, or None. Nothing is created.

    The error says which check failed, for the caller to word: ``name_problem``'s (a name too long for the file
    system, ``suffix`` the longest the writer adds to ``path``'s name), ``IsADirectoryError`` (a file was wanted
    and ``path`` is a folder), ``NotADirectoryError`` whose ``filename`` is the nearest existing path on the way
    that is a file where a folder is needed, or the ``OSError`` of writing in the nearest existing folder
    (``filename`` is that folder) or in an existing ``path`` (``filename`` is ``path``), or of looking ``path`` up.
    """
    path = Path(path)
    too_long = name_problem(path, suffix=suffix)
    if too_long is not None:
        return too_long
    try:
        return _write_problem(path, directory)
    except OSError as error:  # a path the system cannot look up (too long as a whole, ...): named after ``path``
        return type(error)(error.errno, error.strerror, str(path))


def _write_problem(path: Path, directory: bool) -> OSError | None:
    """``output_problem`` past the names' lengths; an ``OSError`` of looking a path up propagates."""
    if not directory and path.is_dir():
        return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    folder = path if directory else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:  # named after the folder, not the temporary file that could not be made
        return type(error)(error.errno, error.strerror, str(folder))
    if not directory and path.exists() and not path.is_file():  # a pipe, a device: replaced by a file, not written
        return OSError(errno.EINVAL, "not a regular file (a pipe or a device); give a file name", str(path))
    if not directory and path.exists() and not os.access(path, os.W_OK):
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    return None


def clashing_outputs(outputs: dict[str, Path], folders: dict[str, Path] | None = None) -> str | None:
    """Why these outputs cannot all be written (by flag: files in ``outputs``, folders in ``folders``), or None: two
    on one path, or a path inside an output file (which would have to be a folder). Checked before any work, so that
    no run ends by failing to write its results."""
    given = {**outputs, **(folders or {})}
    files = {flag: Path(path).resolve() for flag, path in outputs.items()}
    every = {**files, **{flag: Path(path).resolve() for flag, path in (folders or {}).items()}}
    flags = list(every)
    for index, flag in enumerate(flags):
        for other in flags[index + 1 :]:
            if every[flag] == every[other]:
                return f"{flag} and {other} both write {given[other]}; give each its own path"
    for flag, path in files.items():
        inside = [other for other in flags if path in every[other].parents]
        if inside:
            return f"{inside[0]} is inside {path}, the file {flag} writes; give them paths apart"
    return None


def output_inside(outputs: Mapping[str, Path], folders: Mapping[str, Path]) -> tuple[str, str] | None:
    """The first output file that lies inside one of ``folders``, at any depth, as ``(its flag, the folder's flag)``, or
    None. A folder that a run fills with files of its own (``--replays``, a run directory) takes no output: which
    names its files take is decided as the run goes, and a file written there could replace an output or be replaced
    by one. Checked before any work, after ``clashing_outputs``; each caller says why in its own words."""
    for flag, path in outputs.items():
        where = Path(path).resolve().parents
        for folder_flag, folder in folders.items():
            if Path(folder).resolve() in where:
                return flag, folder_flag
    return None


def output_in_folder(outputs: dict[str, Path], folder_flag: str, folder: Path) -> str | None:
    """Why an output file (by flag) would sit in ``folder``, the folder ``folder_flag`` fills with files of its own
    (``--replays``), or None (``output_inside``)."""
    inside = output_inside(outputs, {folder_flag: folder})
    if inside is None:
        return None
    return (
        f"{inside[0]} {outputs[inside[0]]} is inside {folder}, the folder {folder_flag} saves its files in (a file "
        "there of the same name is replaced); write it outside that folder"
    )


def run_writing(body: Callable[[list[str]], object]) -> int:
    """Run ``body(written)``, a command that appends each output to ``written`` once it is whole; 0 when it returns.

    Ctrl-C or SIGTERM stops it with one line on stderr, ``stopped by SIGINT: nothing was written`` or
    ``...: wrote only a.json``, and returns 128 + the signal's number, as the shells do. An output cut short by
    the signal is not there: ``atomic_write`` removes it.
    """
    written: list[str] = []
    try:
        with signals_interrupt():
            body(written)
    except Interrupted as stop:
        stop.saved = f"wrote only {', '.join(written)}" if written else ""
        print(stop.message("nothing was written"), file=sys.stderr, flush=True)
        return stop.exit_status
    return 0


def file_sha256(path: Path) -> str:
    """The SHA-256 of ``path``'s bytes in hex (a checkpoint's, as results and run records name it), read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
