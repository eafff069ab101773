#!/usr/bin/env python3
"""plot_scaling.py CSV PNG - parallel efficiency against ranks from run/scaling.sh's CSV
(columns mode, ranks, ..., efficiency): one line per mode (strong: blue, weak: red) and the
ideal (1.0, grey), on a PNG written with the standard library alone (zlib), so that it runs
on a cluster node without matplotlib. Labels in a 5 x 7 pixel font."""
import csv
import struct
import sys
import zlib

WIDTH, HEIGHT = 640, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50
COLOURS = {"strong": (31, 90, 200), "weak": (200, 40, 40)}
GREY, BLACK, WHITE = (150, 150, 150), (0, 0, 0), (255, 255, 255)

# 5 x 7 glyphs, a row per string, '#' lit
FONT = {
    "0": [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
    "1": ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
    "2": [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
    "3": ["####.", "....#", "....#", ".###.", "....#", "....#", "####."],
    "4": ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
    "5": ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
    "6": [".###.", "#....", "#....", "####.", "#...#", "#...#", ".###."],
    "7": ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
    "8": [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
    "9": [".###.", "#...#", "#...#", ".####", "....#", "....#", ".###."],
    ".": [".....", ".....", ".....", ".....", ".....", ".##..", ".##.."],
    " ": ["....."] * 7,
    ":": [".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."],
    "a": [".....", ".....", ".###.", "....#", ".####", "#...#", ".####"],
    "c": [".....", ".....", ".###.", "#....", "#....", "#...#", ".###."],
    "d": ["....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"],
    "e": [".....", ".....", ".###.", "#...#", "#####", "#....", ".###."],
    "f": ["..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."],
    "g": [".....", ".####", "#...#", "#...#", ".####", "....#", ".###."],
    "i": ["..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."],
    "k": ["#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."],
    "l": [".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."],
    "n": [".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"],
    "o": [".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."],
    "p": [".....", ".....", "####.", "#...#", "####.", "#....", "#...."],
    "r": [".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."],
    "s": [".....", ".....", ".####", "#....", ".###.", "....#", "####."],
    "t": [".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."],
    "w": [".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."],
    "y": [".....", ".....", "#...#", "#...#", ".####", "....#", ".###."],
}


class Canvas:
    def __init__(self):
        self.pixels = [[WHITE] * WIDTH for _ in range(HEIGHT)]

    def dot(self, x, y, colour, size=1):
        for dy in range(-size + 1, size):
            for dx in range(-size + 1, size):
                if 0 <= x + dx < WIDTH and 0 <= y + dy < HEIGHT:
                    self.pixels[y + dy][x + dx] = colour

    def line(self, x0, y0, x1, y1, colour, size=1):
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            self.dot(round(x0 + (x1 - x0) * i / steps), round(y0 + (y1 - y0) * i / steps),
                     colour, size)

    def text(self, x, y, words, colour=BLACK, scale=2):
        for k, char in enumerate(words):
            glyph = FONT.get(char, FONT[" "])
            for row, bits in enumerate(glyph):
                for col, bit in enumerate(bits):
                    if bit == "#":
                        for sy in range(scale):
                            for sx in range(scale):
                                self.dot(x + (6 * k + col) * scale + sx, y + row * scale + sy,
                                         colour)

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(c for pixel in row for c in pixel) for row in self.pixels)
        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
        with open(path, "wb") as out:
            out.write(b"\x89PNG\r\n\x1a\n")
            out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)))
            out.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            out.write(chunk(b"IEND", b""))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_scaling.py SCALING.csv OUT.png")
    rows = list(csv.DictReader(open(sys.argv[1])))
    if not rows:
        sys.exit(f"plot_scaling.py: {sys.argv[1]} has no rows")
    series = {}
    for row in rows:
        series.setdefault(row["mode"], []).append((int(row["ranks"]), float(row["efficiency"])))
    most_ranks = max(r for points in series.values() for r, _ in points)
    top = max(1.2, max(e for points in series.values() for _, e in points) * 1.1)
    def to_x(ranks):
        return LEFT + round((ranks - 1) / max(most_ranks - 1, 1) * (WIDTH - LEFT - RIGHT))
    def to_y(efficiency):
        return HEIGHT - BOTTOM - round(efficiency / top * (HEIGHT - TOP - BOTTOM))
    c = Canvas()
    c.line(LEFT, TOP, LEFT, HEIGHT - BOTTOM, BLACK)
    c.line(LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, HEIGHT - BOTTOM, BLACK)
    for k in range(0, int(top * 5) + 1):  # efficiency ticks every 0.2
        y = to_y(k / 5)
        c.line(LEFT - 5, y, LEFT, y, BLACK)
        c.text(LEFT - 45, y - 7, f"{k / 5:.1f}")
    for ranks in sorted({r for points in series.values() for r, _ in points}):
        x = to_x(ranks)
        c.line(x, HEIGHT - BOTTOM, x, HEIGHT - BOTTOM + 5, BLACK)
        c.text(x - 6, HEIGHT - BOTTOM + 10, str(ranks))
    c.text(WIDTH // 2 - 30, HEIGHT - 18, "ranks")
    c.text(LEFT, 10, "parallel efficiency")
    c.line(to_x(1), to_y(1.0), to_x(most_ranks), to_y(1.0), GREY)
    legend_x = WIDTH - RIGHT - 12 * len("ideal strong weak") - 20
    c.text(legend_x, 10, "ideal", GREY)
    legend_x += 12 * len("ideal ") + 8
    for mode, points in sorted(series.items()):
        colour = COLOURS.get(mode, BLACK)
        points.sort()
        for (r0, e0), (r1, e1) in zip(points, points[1:]):
            c.line(to_x(r0), to_y(e0), to_x(r1), to_y(e1), colour, 2)
        for r, e in points:
            c.dot(to_x(r), to_y(e), colour, 4)
        c.text(legend_x, 10, mode, colour)
        legend_x += 12 * (len(mode) + 1) + 8
    c.png(sys.argv[2])


if __name__ == "__main__":
    main()
