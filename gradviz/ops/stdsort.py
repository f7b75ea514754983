"""libstdc++'s std::sort and std::nth_element, step for step, with the comparison torch passes them.

Neither is stable: where torch reports an index (mode's, nanmedian's of a slice of NaNs), which of
several equivalent entries ends where is what these steps decide. They are libstdc++'s: introsort
(median-of-three pivot, unguarded partition, heap sort past 2·log₂ n levels) down to runs of 16, then
one insertion sort; introselect likewise down to 3 entries.
"""
from __future__ import annotations

_RUN = 16   # libstdc++'s _S_threshold


def std_sort(items: list, less) -> list:
    """items sorted in place, as std::sort(begin, end, less) does."""
    n = len(items)
    if n > 1:
        _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(items, 0, n, less)
    return items


def nth_element(items: list, nth: int, less) -> list:
    """items rearranged in place, as std::nth_element(begin, begin + nth, end, less) does."""
    first, last = 0, len(items)
    depth = 2 * (last.bit_length() - 1) if last else 0
    while last - first > 3:
        if depth == 0:   # __heap_select up to nth, then the top of the heap to nth
            _make_heap(items, first, nth + 1, less)
            for i in range(nth + 1, last):
                if less(items[i], items[first]):
                    value, items[i] = items[i], items[first]
                    _adjust_heap(items, first, 0, nth + 1 - first, value, less)
            items[first], items[nth] = items[nth], items[first]
            return items
        depth -= 1
        cut = _partition_pivot(items, first, last, less)
        first, last = (cut, last) if cut <= nth else (first, cut)
    _final_insertion_sort(items, first, last, less)
    return items


def _introsort_loop(a: list, first: int, last: int, depth: int, less) -> None:
    while last - first > _RUN:
        if depth == 0:
            _heap_sort(a, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _partition_pivot(a: list, first: int, last: int, less) -> int:
    """__move_median_to_first of (first + 1, middle, last − 1), then __unguarded_partition."""
    x, y, z = a[first + 1], a[first + (last - first) // 2], a[last - 1]
    if less(x, y):
        pick = 0 if less(y, z) else 1 if less(x, z) else 2
    else:
        pick = 2 if less(x, z) else 1 if less(y, z) else 0
    pick = (first + (last - first) // 2, last - 1, first + 1)[pick]
    a[first], a[pick] = a[pick], a[first]
    pivot, lo, hi = a[first], first + 1, last
    while True:
        while less(a[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _make_heap(a: list, first: int, last: int, less) -> None:
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, n, a[first + parent], less)


def _heap_sort(a: list, first: int, last: int, less) -> None:
    """__partial_sort(first, last, last): __make_heap, then __sort_heap."""
    _make_heap(a, first, last, less)
    while last - first > 1:
        last -= 1
        value, a[last] = a[last], a[first]
        _adjust_heap(a, first, 0, last - first, value, less)


def _adjust_heap(a: list, first: int, hole: int, n: int, value, less) -> None:
    top = child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2   # __push_heap
    while hole > top and less(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole, parent = parent, (parent - 1) // 2
    a[first + hole] = value


def _final_insertion_sort(a: list, first: int, last: int, less) -> None:
    end = min(last, first + _RUN)
    for i in range(first + 1, end):   # __insertion_sort of the first run
        if less(a[i], a[first]):
            a[first:i + 1] = [a[i]] + a[first:i]
        else:
            _linear_insert(a, first, i, less)
    for i in range(end, last):        # __unguarded_insertion_sort of the rest
        _linear_insert(a, first, i, less)


def _linear_insert(a: list, first: int, i: int, less) -> None:
    """__unguarded_linear_insert; it never passes `first` (only a NaN could make libstdc++ do so)."""
    value = a[i]
    while i > first and less(value, a[i - 1]):
        a[i] = a[i - 1]
        i -= 1
    a[i] = value
