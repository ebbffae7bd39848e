"""FastLZ decompression (``thirdparty/misc/fastlz.c`` in Godot), levels 1 and 2, with its bound
checks: any read or write outside the buffers is an error, never a partial result."""

from __future__ import annotations

MAX_L2_DISTANCE = 8191


class FastLZError(ValueError):
    def __init__(self, offset: int, reason: str) -> None:
        self.offset, self.reason = offset, reason
        super().__init__(f"offset {offset}: {reason}")


def decompress(data: bytes, limit: int) -> bytes:
    """``fastlz_decompress(input, length, output, maxout=limit)``; the level is in the top 3 bits
    of the first byte."""
    if not data:
        raise FastLZError(0, "empty input")
    level = (data[0] >> 5) + 1
    if level not in (1, 2):
        raise FastLZError(0, f"unknown FastLZ level {level}")
    end = len(data)
    out = bytearray()
    ip = 1
    ctrl = data[0] & 31
    while True:
        if ctrl >= 32:
            length = (ctrl >> 5) - 1
            ofs = (ctrl & 31) << 8
            ref = len(out) - ofs - 1
            if level == 1:
                if length == 6:
                    if ip > end - 2:
                        raise FastLZError(ip, "match length runs past the input")
                    length += data[ip]
                    ip += 1
                if ip >= end:
                    raise FastLZError(ip, "match distance runs past the input")
                code = data[ip]
                ip += 1
                ref -= code
            else:
                if length == 6:
                    while True:
                        if ip > end - 2:
                            raise FastLZError(ip, "match length runs past the input")
                        code = data[ip]
                        ip += 1
                        length += code
                        if len(out) + length + 3 > limit:  # not past the limit: a run of 255s is unbounded
                            raise FastLZError(ip, f"output exceeds {limit} bytes")
                        if code != 255:
                            break
                if ip >= end:
                    raise FastLZError(ip, "match distance runs past the input")
                code = data[ip]
                ip += 1
                ref -= code
                if code == 255 and ofs == 31 << 8:  # 16-bit far distance
                    if not ip < end - 2:
                        raise FastLZError(ip, "far distance runs past the input")
                    ofs = (data[ip] << 8) + data[ip + 1]
                    ip += 2
                    ref = len(out) - ofs - MAX_L2_DISTANCE - 1
            length += 3
            if len(out) + length > limit:
                raise FastLZError(ip, f"output exceeds {limit} bytes")
            if ref < 0:
                raise FastLZError(ip, f"match refers {-ref} bytes before the start of the output")
            for i in range(length):  # byte by byte: the match may overlap what it writes
                out.append(out[ref + i])
        else:
            ctrl += 1
            if len(out) + ctrl > limit:
                raise FastLZError(ip, f"output exceeds {limit} bytes")
            if ip + ctrl > end:
                raise FastLZError(ip, f"literal run of {ctrl} bytes runs past the input")
            out += data[ip:ip + ctrl]
            ip += ctrl
        if (level == 1 and ip > end - 2) or (level == 2 and ip >= end):
            break
        ctrl = data[ip]
        ip += 1
    return bytes(out)
