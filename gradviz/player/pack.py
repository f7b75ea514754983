"""The saved player's frames, packed: each step panel written as copies from an earlier frame's panel
plus what is new.

(The frame's other keys: gradviz/player/frames.py's docstring.) A long backward repeats one panel
over and over: the same op, the same formulas and tables, other numbers. A 2,000-step chain's panels are 5.6 MB of HTML that differ in a few numbers a step. A packed
frame keeps everything but its panel ("h") as is and carries instead "b" (the index of an earlier
frame, its base) and "H": the panel as a list of pieces, each either a string (new text) or two
numbers (start, length: a stretch of the base's panel). The player's script (assets/player.js,
`unpack`) rebuilds every panel on load; `unpack` here does the same in Python, so a test can check
that the round trip gives back exactly the frames it started from.
"""
from __future__ import annotations

import re
from itertools import accumulate

# tags, runs of word characters (names, numbers), and the rest: the units a panel is compared in
_TOKEN = re.compile(r"<[^>]*>|[\w.\-+]+|[^<\w.\-+]+")
_MIN_COPY = 12      # characters: a shorter copy costs more than it saves ("1234,56," against the text)
_CANDIDATES = 4     # base positions tried per start (the most recent first)
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")   # characters JavaScript counts as two
_STRIDE = 16        # tokens compared at once while a copy goes on


class _Text:
    """A panel cut into tokens once, whether it is packed or is the base others are packed against."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = _TOKEN.findall(text)
        self._starts = self._index = None

    def starts(self) -> list:
        """Where each token starts, in UTF-16 code units (what JavaScript counts), and the end."""
        if self._starts is None:
            size = _units if _ASTRAL.search(self.text) else len
            self._starts = list(accumulate(map(size, self.tokens), initial=0))
        return self._starts

    def index(self) -> dict:
        """(token, next token) -> the places it starts, in order: a copy starts where 2 tokens in a row match."""
        if self._index is None:
            index = self._index = {}
            get = index.get
            for i, pair in enumerate(zip(self.tokens, self.tokens[1:])):
                places = get(pair)
                if places is None:
                    index[pair] = [i]
                else:
                    places.append(i)
        return self._index


def encode(text: str, base: str) -> list:
    """`text` as pieces against `base`: strings are new text, a pair of ints (start, length) copies base."""
    return _encode(_Text(text).tokens, _Text(base))


def _encode(t: list, base: _Text) -> list:
    """The tokens `t` as pieces against `base` (encode)."""
    b, starts, index = base.tokens, base.starts(), base.index()
    out: list = []
    literal: list = []
    nb, nt = len(b), len(t)
    j, follow = 0, 0            # follow: where the last copy ended in base (panels line up, so try it first)
    while j < nt:
        best, best_len = -1, 0
        tried = index.get((t[j], t[j + 1]), []) if j + 1 < nt else []
        for i in ([follow] if follow < nb and b[follow] == t[j] else []) + tried[-_CANDIDATES:]:
            n, most = 0, min(nt - j, nb - i)
            if best_len:   # only a longer copy counts: one that matches the best one's length and one more
                if most <= best_len or b[i:i + best_len + 1] != t[j:j + best_len + 1]:
                    continue
                n = best_len + 1
            while n + _STRIDE <= most and b[i + n:i + n + _STRIDE] == t[j + n:j + n + _STRIDE]:
                n += _STRIDE   # (lists compared in C: panels that line up match for hundreds of tokens)
            while n < most and b[i + n] == t[j + n]:
                n += 1
            if n > best_len:
                best, best_len = i, n
        if best >= 0 and starts[best + best_len] - starts[best] >= _MIN_COPY:
            if literal:
                out.append("".join(literal))
                literal = []
            out += [starts[best], starts[best + best_len] - starts[best]]
            j += best_len
            follow = best + best_len
        else:
            literal.append(t[j])
            j += 1
    if literal:
        out.append("".join(literal))
    return out


def decode(pieces: list, base: str) -> str:
    """The text that `encode` turned into `pieces` (what the player's `unpack` does in JavaScript)."""
    units = base.encode("utf-16-le")
    out, i = [], 0
    while i < len(pieces):
        p = pieces[i]
        if isinstance(p, str):
            out.append(p)
            i += 1
        else:
            out.append(units[2 * p:2 * (p + pieces[i + 1])].decode("utf-16-le"))
            i += 2
    return "".join(out)


def _units(text: str) -> int:
    """The length of `text` in UTF-16 code units: a character beyond U+FFFF counts two."""
    return len(text) + sum(ord(c) > 0xFFFF for c in text)


def _kind(frame: dict) -> str:
    """What a panel looks like: its title without the step number (the op, the phase)."""
    return re.sub(r"\d+", "", frame.get("t", ""))


def pack(frames: list) -> list:
    """The frames (dicts as the player reads them) with each panel packed against an earlier one:
    the last frame of the same kind (the same op, so the same panel but for its numbers), else the
    previous frame."""
    out: list = []
    last_of_kind: dict = {}
    texts: dict = {}   # each panel tokenised once, then kept while it can be a base: while last of its kind
    for k, frame in enumerate(frames):
        text = frame.get("h", "")
        texts[k] = _Text(text)
        kind = _kind(frame)
        b = last_of_kind.get(kind, k - 1)   # (the previous frame is the last of its own kind)
        best = (b, _encode(texts[k].tokens, texts[b])) if b >= 0 else None
        if kind in last_of_kind:
            del texts[last_of_kind[kind]]
        last_of_kind[kind] = k
        packed = {key: value for key, value in frame.items() if key != "h"}
        if best is not None and _size(best[1]) < len(text):
            packed["b"], packed["H"] = best
        else:
            packed["h"] = text
        out.append(packed)
    return out


def unpack(frames: list) -> list:
    """The frames `pack` was given (what the player's script rebuilds on load)."""
    out: list = []
    for frame in frames:
        if "H" in frame:
            plain = {key: value for key, value in frame.items() if key not in ("b", "H")}
            plain["h"] = decode(frame["H"], out[frame["b"]]["h"])
            frame = plain
        out.append(frame)
    return out


def _size(pieces: list) -> int:
    return sum(len(p) + 3 if isinstance(p, str) else len(str(p)) + 1 for p in pieces)
