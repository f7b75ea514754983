"""The names the makemore programs (tests/support/programs/makemore_*.py) learn from, made in code
where the lectures read names.txt: seeded names of one to three syllables over all 26 letters, their
vocabulary ('.' is 0, the letters 1 to 26) and the (context -> next character) examples, as plain
Python lists, and the lectures' train/dev/test split made into tensors by the program's own library."""
from __future__ import annotations

import random

SYLLABLES = ["an", "em", "ma", "li", "so", "ph", "ia", "ol", "iv", "ja", "ck", "no", "ah", "el", "la", "ri",
             "ze", "yo", "be", "ty", "qu", "wu", "ex", "gd", "fk", "vn"]


def make_words(n: int = 300, seed: int = 42) -> list[str]:
    """n names, shuffled as the lectures shuffle theirs before splitting them (random.seed(42))."""
    rng = random.Random(seed)
    words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(n)]
    rng.shuffle(words)
    return words


def vocabulary(words: list[str]) -> tuple[dict, dict]:
    """stoi and itos as the lectures build them: the letters from 1 in sorted order, '.' as 0."""
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    return stoi, {i: s for s, i in stoi.items()}


def contexts(words: list[str], stoi: dict, block_size: int) -> tuple[list, list]:
    """build_dataset's lists: each character's block_size predecessors (padded with '.') and itself."""
    xs, ys = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            xs.append(context)
            ys.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    return xs, ys


def datasets(torch, words: list[str], stoi: dict, block_size: int) -> list[tuple]:
    """build_dataset of the lectures on their 80/10/10 split: (X, Y) for train, dev and test, made by
    `torch` (PyTorch or gradviz, whichever the program imported), each pair's shapes printed."""
    n1, n2 = int(0.8 * len(words)), int(0.9 * len(words))
    pairs = []
    for part in (words[:n1], words[n1:n2], words[n2:]):
        xs, ys = contexts(part, stoi, block_size)
        pairs.append((torch.tensor(xs), torch.tensor(ys)))
        print(pairs[-1][0].shape, pairs[-1][1].shape)
    return pairs
