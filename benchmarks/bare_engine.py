"""The floor of the chain benchmark: the least a reverse-mode engine written in Python on NumPy does
per op, so engine.py can say how much of gradviz's time per op is Python itself and how much is
what makes it PyTorch's engine.

micrograd's design with NumPy arrays for values: a node per op holding its inputs' values and its
next nodes, a backward that counts dependencies and runs each node once all its consumers have
sent their gradients (as torch's engine and gradviz's do). Only `*`, `+` and `sum`, of one dtype and
one shape, and nothing else: no grad mode, dtype promotion, broadcasting, views, version counters,
hooks, freeing the graph, errors or events.
"""
from __future__ import annotations

import numpy as np


class Tensor:
    __slots__ = ("data", "grad", "node")

    def __init__(self, data, node=None):
        self.data, self.grad, self.node = data, None, node

    def requires_grad_(self) -> "Tensor":
        self.node = Leaf(self)
        return self

    def __mul__(self, other):
        return Tensor(self.data * other.data, Mul(self, other))

    def __add__(self, other):
        return Tensor(self.data + other.data, Add(self, other))

    def sum(self):
        return Tensor(self.data.sum(), Sum(self))

    def backward(self) -> None:
        deps, stack = {}, [self.node]
        while stack:
            for nxt in stack.pop().nexts:
                if nxt is not None:
                    if nxt in deps:
                        deps[nxt] += 1
                    else:
                        deps[nxt] = 1
                        stack.append(nxt)
        buffers, ready = {self.node: np.ones((), self.data.dtype)}, [self.node]
        while ready:
            node = ready.pop()
            g = buffers.pop(node)
            if type(node) is Leaf:
                t = node.tensor
                t.grad = g if t.grad is None else t.grad + g
                continue
            for nxt, gi in zip(node.nexts, node.vjp(g)):
                if nxt is None:
                    continue
                buffers[nxt] = buffers[nxt] + gi if nxt in buffers else gi
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    ready.append(nxt)


class Leaf:
    __slots__ = ("tensor", "nexts")

    def __init__(self, tensor):
        self.tensor, self.nexts = tensor, ()


class Mul:
    __slots__ = ("a", "b", "nexts")

    def __init__(self, a, b):
        self.a, self.b, self.nexts = a.data, b.data, (a.node, b.node)

    def vjp(self, g):
        return g * self.b, g * self.a


class Add:
    __slots__ = ("nexts",)

    def __init__(self, a, b):
        self.nexts = (a.node, b.node)

    def vjp(self, g):
        return g, g


class Sum:
    __slots__ = ("shape", "nexts")

    def __init__(self, a):
        self.shape, self.nexts = a.data.shape, (a.node,)

    def vjp(self, g):
        return (np.broadcast_to(g, self.shape),)


def tensor(values) -> Tensor:
    return Tensor(np.array(values, dtype=np.float32))


def ones(n: int, requires_grad: bool = False) -> Tensor:
    t = Tensor(np.ones(n, dtype=np.float32))
    return t.requires_grad_() if requires_grad else t
