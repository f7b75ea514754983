"""GIF export of an Animation: Graphviz's `dot` for pictures, Pillow to assemble them.

The graph is still laid out once: `dot -Tdot` writes the positions, and every frame
is that positioned graph restyled by id (colours, pen widths, invisibility) and
drawn by `neato -n2`, which keeps the given positions. Raster output needs the
system Graphviz (the WebAssembly build writes no PNG), hence the clear errors.
"""
from __future__ import annotations

import html
import io
import os
import re
import shutil
from pathlib import Path

from ..render.backends import run_limited
from ..render.theme import LIGHT_PALETTE, resolve_theme, state_styles
from ..render import to_dot

# DOT attributes standing for the player's CSS states: the theme's state colours (render/theme.py)
NODE_STYLE, EDGE_STYLE = state_styles(LIGHT_PALETTE)
INSTALL = "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"


def _tools() -> tuple:
    try:
        from PIL import Image  # noqa: F401
    except ImportError:
        raise RuntimeError("saving an Animation as .gif needs Pillow: pip install pillow "
                           "(or pip install 'gradviz[gif]'); .save('x.html') needs nothing extra") from None
    dot, neato = shutil.which("dot"), shutil.which("neato")
    if not dot or not neato:
        raise RuntimeError(f"saving an Animation as .gif needs Graphviz's `dot` and `neato` programs, which were not "
                           f"found on PATH: {INSTALL}; or save it as .html, which needs no Graphviz binary")
    return dot, neato


def _statement_end(src: str, start: int) -> int:
    """Index of the ']' closing the attribute list that contains position `start`
    (skipping quoted strings and <...> HTML labels)."""
    i, depth, quoted = start, 0, False
    while i < len(src):
        ch = src[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "]" and depth == 0:
            return i
        i += 1
    return -1


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


# the player's edge widths (player.css gv-w0..gv-w6) as pen widths, and its backward states, in which
# arrowheads point at the input
PENWIDTHS = {0: "0.75", 1: "1", 2: "1.5", 3: "2", 4: "2.75", 5: "3.75", 6: "5"}
BACKWARD_EDGE_STATES = ("idle", "flowing", "done")


def backward_pos(pos: str) -> str | None:
    """A positioned edge's `pos` ("e,tip p0 ... pn": the head at the consumer) with the arrowhead
    moved to the input end ("s,p0 ..."): the line starts an arrow's length in and runs on to the tip."""
    parts = pos.replace("\\\n", "").split()
    if not parts or not parts[0].startswith("e,"):
        return None
    try:
        tip = tuple(float(v) for v in parts[0][2:].split(","))
        points = [tuple(float(v) for v in p.split(",")) for p in parts[1:]]
    except ValueError:
        return None
    if len(points) < 2:
        return None
    (ex, ey), (sx, sy) = points[-1], points[0]
    length = ((tip[0] - ex) ** 2 + (tip[1] - ey) ** 2) ** 0.5
    nx, ny = next(((x, y) for x, y in points[1:] if abs(x - sx) + abs(y - sy) > 1e-6), points[-1])
    norm = ((nx - sx) ** 2 + (ny - sy) ** 2) ** 0.5 or 1.0
    start = (sx + (nx - sx) / norm * length, sy + (ny - sy) / norm * length)
    moved = [start] + points[1:-1] + [tip]
    return f"s,{sx:g},{sy:g} " + " ".join(f"{x:g},{y:g}" for x, y in moved)


def _edge_pos(positioned: str, ident: str) -> str | None:
    for key in (f"id={ident},", f"id={ident}]", f"id={ident}\n", f'id="{ident}"'):
        at = positioned.find(key)
        if at >= 0:
            start = positioned.rfind("[", 0, at)
            end = _statement_end(positioned, at)
            m = re.search(r'\bpos="([^"]*)"', positioned[start:end])
            return m.group(1) if m else None
    return None


def restyle(positioned: str, state: dict, labels: dict, kinds: dict, styles: tuple = (NODE_STYLE, EDGE_STYLE),
            widths: dict | None = None) -> str:
    """The positioned DOT with each id's state (and flowing edges' labels) as attributes; edges in a
    backward state point at their input, as thick as `widths` (edge id -> width level) says."""
    inserts = []
    node_style, edge_style = styles
    widths = widths or {}
    for ident, st in state.items():
        style = (edge_style if kinds.get(ident) == "edge" else node_style).get(st)
        extra = dict(style or {})
        if kinds.get(ident) == "edge" and st in BACKWARD_EDGE_STATES:
            back = backward_pos(_edge_pos(positioned, ident) or "")
            if back is not None:
                extra.update(dir="back", pos=back)
        if kinds.get(ident) == "edge" and style is not None and ident in widths:
            extra["penwidth"] = PENWIDTHS[widths[ident]]   # a tangent's size, as a gradient's
        if ident in labels and labels[ident]:
            extra["xlabel"] = labels[ident]
        if not extra:
            continue
        for key in (f"id={ident},", f"id={ident}]", f"id={ident}\n", f'id="{ident}"'):
            at = positioned.find(key)
            if at >= 0:
                end = _statement_end(positioned, at)
                if end > 0:
                    inserts.append((end, ", ".join(f"{k}={_dot_string(v)}" for k, v in extra.items())))
                break
    out, pos = [], 0
    for end, attrs in sorted(inserts):
        out.append(positioned[pos:end])
        out.append(", " + attrs)
        pos = end
    out.append(positioned[pos:])
    return "".join(out)


def _font(size: int):
    from PIL import ImageFont
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "Arial.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def _wrap(draw, text: str, font, width: int) -> list:
    lines = []
    for para in text.split("; "):
        words, line = para.split(" "), ""
        for word in words:
            trial = f"{line} {word}".strip()
            if draw.textlength(trial, font=font) <= width or not line:
                line = trial
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def save_gif(animation, path: str | os.PathLike, duration_ms: int | None = None, width: int = 900,
             max_frames: int = 400) -> Path:
    """Write `animation` as an animated GIF: one picture per frame with its caption below."""
    dot, neato = _tools()
    from PIL import Image, ImageDraw
    path = Path(path)
    frames = animation.frames[:max_frames]
    if not frames:
        raise ValueError("this animation has no frames to save")
    source = to_dot(animation.trace, **animation.draw_options)
    positioned = _run([dot, "-Tdot"], source.encode("utf-8")).decode("utf-8")
    kinds = animation.stage.kinds
    palette = resolve_theme(animation.draw_options.get("theme")).palette
    styles = state_styles(palette)
    font, title_font = _font(15), _font(17)
    pictures = []
    state: dict = {}
    widths: dict = {}
    for frame in frames:
        state.update(frame.changes)
        widths.update(frame.widths)
        png = _run([neato, "-n2", "-Tpng", "-Gdpi=96"],
                   restyle(positioned, state, frame.labels, kinds, styles, widths).encode())
        graph = Image.open(io.BytesIO(png)).convert("RGB")
        if graph.width > width:
            graph = graph.resize((width, max(1, round(graph.height * width / graph.width))))
        canvas_w = max(width, graph.width)
        probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
        lines = _wrap(probe, frame.caption or "", font, canvas_w - 24)
        text_h = 16 + 24 + 20 * len(lines)
        canvas = Image.new("RGB", (canvas_w, graph.height + text_h), palette.bg)
        canvas.paste(graph, ((canvas_w - graph.width) // 2, 0))
        draw = ImageDraw.Draw(canvas)
        y = graph.height + 8
        draw.text((12, y), _plain_title(frame.title), fill=palette.fg, font=title_font)
        y += 24
        for line in lines:
            draw.text((12, y), line, fill=palette.fg, font=font)
            y += 20
        pictures.append(canvas)
    size = (max(p.width for p in pictures), max(p.height for p in pictures))
    padded = []
    for p in pictures:
        if p.size != size:
            full = Image.new("RGB", size, palette.bg)
            full.paste(p, (0, 0))
            p = full
        padded.append(p.quantize(colors=128, method=Image.Quantize.MEDIANCUT))
    duration = duration_ms or animation.interval_ms
    padded[0].save(path, save_all=True, append_images=padded[1:], duration=duration, loop=0, optimize=False)
    return path


def _plain_title(title: str) -> str:
    return html.unescape(title)


def _run(cmd: list, data: bytes) -> bytes:
    done = run_limited(cmd, data, data.decode("utf-8", "replace"))
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz's {Path(cmd[0]).name} failed ({done.returncode}): "
                           f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout
