"""Headless Chromium's path and a small PNG decoder, for the tests that look at a rendered
report."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

CHROMIUM = Path("/usr/bin/chromium")


def png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA PNG into an (h, w, channels) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat.append(body)
    assert depth == 8 and colour in (2, 6), (depth, colour)
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
    raw = raw.reshape(height, stride + 1)
    image = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 1:  # Sub: a running sum per channel, modulo 256
            row = np.cumsum(line.reshape(width, channels), axis=0, dtype=np.uint8).reshape(-1)
        elif kind == 2:
            row = line + previous
        else:
            row = _unfilter_sequential(kind, line, previous, channels)
        image[y] = row
        previous = row
    return image.reshape(height, width, channels)


def _unfilter_sequential(kind: int, line: np.ndarray, above: np.ndarray, bpp: int) -> np.ndarray:
    out = bytearray(len(line))
    filt, up = line.tobytes(), above.tobytes()
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        b = up[i]
        if kind == 3:
            predictor = (a + b) // 2
        else:  # Paeth
            c = up[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        out[i] = (filt[i] + predictor) & 0xFF
    return np.frombuffer(bytes(out), dtype=np.uint8)
