"""ENet's adaptive order-2 PPM range coder (``thirdparty/enet/compress.c``), ported to Python.

Integer widths follow the C code (u32 coder state, u16 context fields, u8 counts and values) so
the model evolves exactly as ENet's. Differences, all on input ENet itself would choke on: where
the C code would divide by zero or loop forever on a degenerate coder state, this raises
``RangeCoderError``; the binary-tree rescale is iterative (no recursion limit).

``decompress`` runs the compiled port (``_rangecoder.c``, about 100 times faster) when it is built and
``GODOT_DISSECT_PURE`` is not set; ``decompress_pure`` is the reference it is tested against.
"""

from __future__ import annotations

import os

try:
    from . import _rangecoder
except ImportError:  # not built: the pure port
    _rangecoder = None  # type: ignore[assignment]

TOP = 1 << 24
BOTTOM = 1 << 16
CONTEXT_SYMBOL_DELTA = 3
CONTEXT_SYMBOL_MINIMUM = 1
CONTEXT_ESCAPE_MINIMUM = 1
SUBCONTEXT_ORDER = 2
SUBCONTEXT_SYMBOL_DELTA = 2
SUBCONTEXT_ESCAPE_DELTA = 5
SYMBOL_CAPACITY = 4096  # ENetRangeCoder.symbols: "only enough symbols for reasonable MTUs"
_M32 = 0xFFFFFFFF
_M16 = 0xFFFF
_PREDICTED = -1  # the ``parent`` pointer still points at the local ``predicted``
_MAX_NORMALISE = 64  # a sane state renormalises in a few shifts; range 0 would spin forever in C


class RangeCoderError(ValueError):
    """The input is not a range-coded ENet body (ENet's decompressor returns 0 for it)."""

    def __init__(self, offset: int, reason: str) -> None:
        self.offset, self.reason = offset, reason
        super().__init__(f"offset {offset}: {reason}")


class _Model:
    """The symbol table: one list per ENetSymbol field, indexed by symbol number."""

    def __init__(self) -> None:
        n = SYMBOL_CAPACITY
        self.value = [0] * n
        self.count = [0] * n
        self.under = [0] * n
        self.left = [0] * n
        self.right = [0] * n
        self.symbols = [0] * n
        self.escapes = [0] * n
        self.total = [0] * n
        self.parent = [0] * n
        self.next = 0

    def create(self, value: int, count: int) -> int:
        i = self.next
        if i >= SYMBOL_CAPACITY:
            raise RangeCoderError(0, "symbol table overflow")
        self.next = i + 1
        self.value[i] = value & 0xFF
        self.count[i] = count & 0xFF
        self.under[i] = count & _M16
        self.left[i] = self.right[i] = self.symbols[i] = self.escapes[i] = self.total[i] = self.parent[i] = 0
        return i

    def create_context(self, escapes: int, minimum: int) -> int:
        i = self.create(0, 0)
        self.escapes[i] = escapes
        self.total[i] = (escapes + 256 * minimum) & _M16
        self.symbols[i] = 0
        return i

    def rescale_tree(self, start: int) -> int:
        """``enet_symbol_rescale``: halve counts along the right spine from ``start`` and in every
        left subtree, recompute ``under``; returns the (u16) total."""
        count, under, left, right = self.count, self.under, self.left, self.right
        stack: list[tuple[int, int]] = []
        node, total = start, 0
        while True:
            count[node] -= count[node] >> 1
            under[node] = count[node]
            if left[node]:
                stack.append((node, total))
                node, total = node + left[node], 0
                continue
            while True:  # node done: add it, go right, or return to the node whose left subtree this was
                total = (total + under[node]) & _M16
                if right[node]:
                    node += right[node]
                    break
                if not stack:
                    return total
                up, up_total = stack.pop()
                under[up] = (under[up] + total) & _M16
                node, total = up, up_total

    def rescale(self, ctx: int, minimum: int) -> None:
        self.total[ctx] = self.rescale_tree(ctx + self.symbols[ctx]) if self.symbols[ctx] else 0
        self.escapes[ctx] -= self.escapes[ctx] >> 1
        self.total[ctx] = (self.total[ctx] + self.escapes[ctx] + 256 * minimum) & _M16

    def encode_symbol(self, ctx: int, value: int, update: int, minimum: int) -> tuple[int, int, int]:
        """``ENET_CONTEXT_ENCODE``: find or add ``value`` in the context; returns (symbol, under, count)."""
        under_ = value * minimum
        count_ = minimum
        if not self.symbols[ctx]:
            s = self.create(value, update)
            self.symbols[ctx] = s - ctx
            return s, under_ & _M16, count_
        node = ctx + self.symbols[ctx]
        while True:
            nv = self.value[node]
            if value < nv:
                self.under[node] = (self.under[node] + update) & _M16
                if self.left[node]:
                    node += self.left[node]
                    continue
                s = self.create(value, update)
                self.left[node] = s - node
            elif value > nv:
                under_ += self.under[node]
                if self.right[node]:
                    node += self.right[node]
                    continue
                s = self.create(value, update)
                self.right[node] = s - node
            else:
                count_ += self.count[node]
                under_ += self.under[node] - self.count[node]
                self.under[node] = (self.under[node] + update) & _M16
                self.count[node] = (self.count[node] + update) & 0xFF
                s = node
            return s, under_ & _M16, count_ & _M16


#: the compiled decompressor, or None (not built, or GODOT_DISSECT_PURE)
_COMPILED = (_rangecoder.decompress if _rangecoder is not None
             and os.environ.get("GODOT_DISSECT_PURE", "") in ("", "0") else None)


def decompress(data: bytes, limit: int) -> bytes:
    """``enet_range_coder_decompress``: at most ``limit`` output bytes (ENet fails past its buffer)."""
    if _COMPILED is not None:
        out = _COMPILED(data, limit)
        if type(out) is tuple:
            raise RangeCoderError(*out)
        return out
    return decompress_pure(data, limit)


def decompress_pure(data: bytes, limit: int) -> bytes:
    """``decompress`` in Python: the reference of the compiled port."""
    if not data:
        raise RangeCoderError(0, "empty input")
    m = _Model()
    out = bytearray()
    pos, end = 0, len(data)
    low, code_reg, rng = 0, 0, _M32
    for shift in (24, 16, 8, 0):
        if pos < end:
            code_reg |= data[pos] << shift
            pos += 1
    root = m.create_context(CONTEXT_ESCAPE_MINIMUM, CONTEXT_SYMBOL_MINIMUM)
    predicted, order = 0, 0

    def read(total: int) -> int:
        nonlocal rng
        rng //= total
        if rng == 0:
            raise RangeCoderError(pos, "coder range collapsed to 0 (ENet would divide by zero)")
        return (((code_reg - low) & _M32) // rng) & _M16

    def decode(under: int, count: int) -> None:
        nonlocal low, rng, code_reg, pos
        low = (low + under * rng) & _M32
        rng = (rng * count) & _M32
        for _ in range(_MAX_NORMALISE):
            if rng == 0:
                break
            if (low ^ (low + rng)) & _M32 >= TOP:
                if rng >= BOTTOM:
                    return
                rng = -low & (BOTTOM - 1)
            code_reg = (code_reg << 8) & _M32
            if pos < end:
                code_reg |= data[pos]
                pos += 1
            rng = (rng << 8) & _M32
            low = (low << 8) & _M32
        raise RangeCoderError(pos, "coder range degenerate (ENet would loop forever)")

    while True:
        value = 0
        parent_ref = _PREDICTED
        sub = predicted
        found = False
        while sub != root:
            esc = m.escapes[sub]
            if esc <= 0:
                sub = m.parent[sub]
                continue
            total = m.total[sub]
            if esc >= total:
                sub = m.parent[sub]
                continue
            code = read(total)
            if code < esc:
                decode(0, esc)
                sub = m.parent[sub]
                continue
            code -= esc
            symbol, value, under, count = _try_decode(m, sub, code, pos)
            bottom = symbol
            decode((esc + under) & _M16, count)
            m.total[sub] = (m.total[sub] + SUBCONTEXT_SYMBOL_DELTA) & _M16
            if count > 0xFF - 2 * SUBCONTEXT_SYMBOL_DELTA or m.total[sub] > BOTTOM - 0x100:
                m.rescale(sub, 0)
            found = True
            break
        if not found:
            total = m.total[root]
            code = read(total)
            esc = m.escapes[root]
            if code < esc:
                decode(0, esc)
                break  # end of stream
            code -= esc
            symbol, value, under, count = _root_decode(m, root, code)
            bottom = symbol
            decode((esc + under) & _M16, count)
            m.total[root] = (m.total[root] + CONTEXT_SYMBOL_DELTA) & _M16
            if (count > 0xFF - 2 * CONTEXT_SYMBOL_DELTA + CONTEXT_SYMBOL_MINIMUM
                    or m.total[root] > BOTTOM - 0x100):
                m.rescale(root, CONTEXT_SYMBOL_MINIMUM)
        # patchContexts: teach the skipped lower-order contexts the symbol
        patch = predicted
        while patch != sub:
            s, _, cnt = m.encode_symbol(patch, value, SUBCONTEXT_SYMBOL_DELTA, 0)
            if parent_ref == _PREDICTED:
                predicted = s
            else:
                m.parent[parent_ref] = s
            parent_ref = s
            if cnt <= 0:
                m.escapes[patch] = (m.escapes[patch] + SUBCONTEXT_ESCAPE_DELTA) & _M16
                m.total[patch] = (m.total[patch] + SUBCONTEXT_ESCAPE_DELTA) & _M16
            m.total[patch] = (m.total[patch] + SUBCONTEXT_SYMBOL_DELTA) & _M16
            if cnt > 0xFF - 2 * SUBCONTEXT_SYMBOL_DELTA or m.total[patch] > BOTTOM - 0x100:
                m.rescale(patch, 0)
            patch = m.parent[patch]
        if parent_ref == _PREDICTED:
            predicted = bottom
        else:
            m.parent[parent_ref] = bottom
        if len(out) >= limit:
            raise RangeCoderError(pos, f"decompressed data exceeds {limit} bytes")
        out.append(value)
        if order >= SUBCONTEXT_ORDER:
            predicted = m.parent[predicted]
        else:
            order += 1
        if m.next >= SYMBOL_CAPACITY - SUBCONTEXT_ORDER:  # ENET_RANGE_CODER_FREE_SYMBOLS
            m.next = 0
            root = m.create_context(CONTEXT_ESCAPE_MINIMUM, CONTEXT_SYMBOL_MINIMUM)
            predicted, order = 0, 0
    return bytes(out)


def _try_decode(m: _Model, ctx: int, code: int, pos: int) -> tuple[int, int, int, int]:
    """``ENET_CONTEXT_TRY_DECODE`` (minimum 0): the symbol ``code`` falls on; returns
    (symbol, value, under, count). A code between symbols is invalid input (ENet returns 0)."""
    under_ = 0
    if not m.symbols[ctx]:
        raise RangeCoderError(pos, "code in an empty context")
    node = ctx + m.symbols[ctx]
    while True:
        after = (under_ + m.under[node]) & _M16
        before = m.count[node]
        if code >= after:
            under_ = (under_ + m.under[node]) & _M16
            if m.right[node]:
                node += m.right[node]
                continue
            raise RangeCoderError(pos, "code past the last symbol of a context")
        if code < after - before:
            m.under[node] = (m.under[node] + SUBCONTEXT_SYMBOL_DELTA) & _M16
            if m.left[node]:
                node += m.left[node]
                continue
            raise RangeCoderError(pos, "code before the first symbol of a context")
        m.under[node] = (m.under[node] + SUBCONTEXT_SYMBOL_DELTA) & _M16
        count = m.count[node]
        m.count[node] = (m.count[node] + SUBCONTEXT_SYMBOL_DELTA) & 0xFF
        return node, m.value[node], (after - before) & _M16, count


def _root_decode(m: _Model, ctx: int, code: int) -> tuple[int, int, int, int]:
    """``ENET_CONTEXT_ROOT_DECODE`` (minimum 1): finds or creates the symbol; (symbol, value, under, count)."""
    minimum, update = CONTEXT_SYMBOL_MINIMUM, CONTEXT_SYMBOL_DELTA
    under_ = 0
    if not m.symbols[ctx]:
        value = (code // minimum) & 0xFF
        under_ = code - code % minimum
        s = m.create(value, update)
        m.symbols[ctx] = s - ctx
        return s, value, under_ & _M16, minimum
    node = ctx + m.symbols[ctx]
    while True:
        after = (under_ + m.under[node] + (m.value[node] + 1) * minimum) & _M16
        before = (m.count[node] + minimum) & _M16
        if code >= after:
            under_ = (under_ + m.under[node]) & _M16
            if m.right[node]:
                node += m.right[node]
                continue
            value = (m.value[node] + 1 + (code - after) // minimum) & 0xFF
            under_ = code - (code - after) % minimum
            s = m.create(value, update)
            m.right[node] = s - node
            return s, value, under_ & _M16, minimum
        if code < after - before:
            m.under[node] = (m.under[node] + update) & _M16
            if m.left[node]:
                node += m.left[node]
                continue
            value = (m.value[node] - 1 - (after - before - code - 1) // minimum) & 0xFF
            under_ = code - (after - before - code - 1) % minimum
            s = m.create(value, update)
            m.left[node] = s - node
            return s, value, under_ & _M16, minimum
        count = (minimum + m.count[node]) & _M16
        m.under[node] = (m.under[node] + update) & _M16
        m.count[node] = (m.count[node] + update) & 0xFF
        return node, m.value[node], (after - before) & _M16, count


def compress(data: bytes) -> bytes:
    """``enet_range_coder_compress`` (no output limit: ENet itself gives up when the result is not
    smaller than the input)."""
    m = _Model()
    out = bytearray()
    low, rng = 0, _M32

    def encode(under: int, count: int, total: int) -> None:
        nonlocal low, rng
        rng //= total
        low = (low + under * rng) & _M32
        rng = (rng * count) & _M32
        while True:
            if (low ^ (low + rng)) & _M32 >= TOP:
                if rng >= BOTTOM:
                    return
                rng = -low & (BOTTOM - 1)
            out.append(low >> 24)
            rng = (rng << 8) & _M32
            low = (low << 8) & _M32

    root = m.create_context(CONTEXT_ESCAPE_MINIMUM, CONTEXT_SYMBOL_MINIMUM)
    predicted, order = 0, 0
    for value in data:
        parent_ref = _PREDICTED
        sub = predicted
        coded = False
        while sub != root:
            symbol, under, count = m.encode_symbol(sub, value, SUBCONTEXT_SYMBOL_DELTA, 0)
            if parent_ref == _PREDICTED:
                predicted = symbol
            else:
                m.parent[parent_ref] = symbol
            parent_ref = symbol
            total = m.total[sub]
            if count > 0:
                encode((m.escapes[sub] + under) & _M16, count, total)
            else:
                if 0 < m.escapes[sub] < total:
                    encode(0, m.escapes[sub], total)
                m.escapes[sub] = (m.escapes[sub] + SUBCONTEXT_ESCAPE_DELTA) & _M16
                m.total[sub] = (m.total[sub] + SUBCONTEXT_ESCAPE_DELTA) & _M16
            m.total[sub] = (m.total[sub] + SUBCONTEXT_SYMBOL_DELTA) & _M16
            if count > 0xFF - 2 * SUBCONTEXT_SYMBOL_DELTA or m.total[sub] > BOTTOM - 0x100:
                m.rescale(sub, 0)
            if count > 0:
                coded = True
                break
            sub = m.parent[sub]
        if not coded:
            symbol, under, count = m.encode_symbol(root, value, CONTEXT_SYMBOL_DELTA, CONTEXT_SYMBOL_MINIMUM)
            if parent_ref == _PREDICTED:
                predicted = symbol
            else:
                m.parent[parent_ref] = symbol
            total = m.total[root]
            encode((m.escapes[root] + under) & _M16, count, total)
            m.total[root] = (m.total[root] + CONTEXT_SYMBOL_DELTA) & _M16
            if (count > 0xFF - 2 * CONTEXT_SYMBOL_DELTA + CONTEXT_SYMBOL_MINIMUM
                    or m.total[root] > BOTTOM - 0x100):
                m.rescale(root, CONTEXT_SYMBOL_MINIMUM)
        if order >= SUBCONTEXT_ORDER:
            predicted = m.parent[predicted]
        else:
            order += 1
        if m.next >= SYMBOL_CAPACITY - SUBCONTEXT_ORDER:
            m.next = 0
            root = m.create_context(CONTEXT_ESCAPE_MINIMUM, CONTEXT_SYMBOL_MINIMUM)
            predicted, order = 0, 0
    while low:  # ENET_RANGE_CODER_FLUSH
        out.append(low >> 24)
        low = (low << 8) & _M32
    return bytes(out)
