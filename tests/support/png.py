"""Just enough PNG reading for screenshot checks: the first rows of an 8-bit RGB(A) image.

No imaging library in the test dependencies for one check: PNG rows are zlib-compressed
and each is filtered against the row above, so the top of an image decodes on its own.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk."""
    assert data[:8] == SIGNATURE, "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def top_rows(data: bytes, rows: int) -> list[list[tuple[int, int, int]]]:
    """The first `rows` rows as RGB pixels (8-bit, non-interlaced, RGB or RGBA only)."""
    width, _ = size(data)
    depth, color, _, _, interlace = data[24:29]
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    channels = 3 if color == 2 else 4
    idat, pos = b"", 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    stride = width * channels
    raw = zlib.decompressobj().decompress(idat, (stride + 1) * rows)
    out: list[list[tuple[int, int, int]]] = []
    prev = bytearray(stride)
    for r in range(rows):
        line = raw[r * (stride + 1) : (r + 1) * (stride + 1)]
        kind, cur = line[0], bytearray(line[1:])
        for i in range(stride):
            a = cur[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                cur[i] = (cur[i] + a) & 0xFF
            elif kind == 2:
                cur[i] = (cur[i] + b) & 0xFF
            elif kind == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[i] = (cur[i] + pred) & 0xFF
        out.append([tuple(cur[i : i + 3]) for i in range(0, stride, channels)])  # type: ignore[misc]
        prev = cur
    return out
