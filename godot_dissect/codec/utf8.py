"""UTF-8 as Godot's ``String::parse_utf8`` reads it.

Both versions skip a leading BOM and stop at the first NUL byte. Godot 4 rejects anything that is
not valid UTF-8. Godot 3 also takes surrogates, code points above U+10FFFF and 5/6-byte forms
(Python cannot hold those: they become U+FFFD), and rejects only some overlong forms.
"""

from __future__ import annotations

_BOM = b"\xef\xbb\xbf"


def _trim(raw: bytes) -> bytes:
    if raw[:3] == _BOM:
        raw = raw[3:]
    nul = raw.find(0)
    return raw if nul < 0 else raw[:nul]


def decode_strict(raw: bytes) -> str | None:
    """Godot 4 rules; None when the engine would reject the bytes."""
    if raw.isascii() and 0 not in raw:
        return raw.decode("ascii")
    try:
        return _trim(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def decode_godot3(raw: bytes) -> str | None:
    """Godot 3 rules (``String::parse_utf8`` in 3.x); None when it would reject the bytes."""
    s = decode_strict(raw)
    if s is not None:
        return s
    data = _trim(raw)
    out: list[str] = []
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c < 0x80:
            length = 1
        elif c & 0xE0 == 0xC0:
            length = 2
        elif c & 0xF0 == 0xE0:
            length = 3
        elif c & 0xF8 == 0xF0:
            length = 4
        elif c & 0xFC == 0xF8:
            length = 5
        elif c & 0xFE == 0xFC:
            length = 6
        else:
            return None  # invalid lead byte
        if i + length > n:
            return None  # sequence cut short (by the end or by a NUL)
        if length == 2 and c & 0x1E == 0:
            return None  # overlong 2-byte form
        cp = c if length == 1 else c & (0xFF >> (length + 1))
        for k in range(1, length):
            b = data[i + k]
            if b & 0xC0 != 0x80:
                return None
            # the engine's only other overlong check: a zero lead payload and a short 3rd byte
            if cp == 0 and k == 2 and ((b & 0x7F) >> (7 - length)) == 0:
                return None
            cp = (cp << 6) | (b & 0x3F)
        out.append(chr(cp) if cp <= 0x10FFFF else "\ufffd")
        i += length
    return "".join(out)
