"""A recorded game as one self-contained HTML file: the viewer's scripts, its style and the frames inline.

The file needs no server and no network: it opens from disk (``file://``) and steps through the game move by
move, for any seat's view or the full table (the same viewer as the live page's history). Every text of the
record reaches the page as data (``textContent``), and the frames' JSON is escaped so that no string in a
record can close the script element that holds it.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from pathlib import Path

from friday13_env.core.files import atomic_write_text
from friday13_env.web.record import CardRecord, Record
from friday13_env.web.views import record_view

SCRIPTS = ("cards.js", "viewer.js")
BOOT = """
const data = JSON.parse(document.getElementById("replay-data").textContent);
new Viewer(document.getElementById("viewer"), data.table, data.frames, {});
document.getElementById("viewer").focus();
"""


def _static(name: str) -> str:
    return resources.files("friday13_env.web").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def title(record: Record) -> str:
    if isinstance(record, CardRecord):
        return f"Friday the 13th, {record.players} players, {record.deck} deck: {', '.join(record.seats)}"
    return f"Friday (solo), level {record.level}: {record.player}"


def render(record: Record) -> str:
    """The HTML page of ``record`` (a checked record: its frames are rebuilt by the engine here)."""
    data = json.dumps(record_view(record), separators=(",", ":"))
    # "<" never appears raw inside the script element, so no string in the data can end it.
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    source = "; ".join(f"{key}: {value}" for key, value in record.source.items())
    scripts = "\n".join(f"<script>\n{_static(name)}\n</script>" for name in SCRIPTS)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>{escape(title(record))}</title>
<style>
{_static("style.css")}
</style>
</head>
<body>
<header><h1>{escape(title(record))}</h1>
<p class="tagline">Replay. Keys: <kbd>&larr;</kbd> <kbd>&rarr;</kbd> step, <kbd>Home</kbd> <kbd>End</kbd>.
{escape(source)}</p>
</header>
<main><section id="viewer" tabindex="0" aria-label="replay"></section></main>
<script type="application/json" id="replay-data">{data}</script>
{scripts}
<script>{BOOT}</script>
</body>
</html>
"""


def write(record: Record, path: str | Path) -> Path:
    """Write ``record``'s HTML viewer to ``path``; returns the path."""
    path = Path(path)
    atomic_write_text(path, render(record))
    return path
