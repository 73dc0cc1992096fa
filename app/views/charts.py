"""Server-rendered SVG charts for the dashboard: no script, no library, nothing fetched.

Each function returns SVG markup for a page's body. Every text in it is escaped here
(the template inserts the whole chart with `|safe`), and colours are presentation attributes, so
the pages' Content-Security-Policy (no inline style, no script) holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from html import escape

# One colour per status an agent sees, as the badges in static/style.css say them.
COLOURS: dict[str, str] = {
    "processing": "#2457c5",
    "awaiting_approval": "#7a4fc5",
    "cancelling": "#d98a1c",
    "succeeded": "#1d7a46",
    "completed_with_errors": "#a35c00",
    "failed": "#b3261e",
    "cancelled": "#8a939e",
    "needs_attention": "#e0457b",
}
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def _text(x: float, y: float, words: str, *, anchor: str = "start", fill: str = "#66707c") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}" {FONT}>'
        f"{escape(words)}</text>"
    )


def seconds_text(seconds: float) -> str:
    """`850 ms`, `42 s`, `7.5 min`, `3.2 h`: a duration at a glance."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def stacked_hours(
    hours: Sequence[datetime], counts: Sequence[Counter[str]], statuses: Sequence[str]
) -> str:
    """Operations created per hour, one bar per hour stacked by status, with a legend."""
    width, height, left, bottom, top = 720, 220, 40, 30, 10
    plot_w, plot_h = width - left - 10, height - bottom - top
    peak = max([sum(c.values()) for c in counts] + [1])
    bar_w = plot_w / max(1, len(hours))
    parts = [
        f'<svg class="chart" role="img" aria-label="operations created per hour, by status" '
        f'viewBox="0 0 {width} {height + 24}" width="{width}" height="{height + 24}" '
        f'xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in (0, peak // 2, peak):
        y = top + plot_h - plot_h * tick / peak
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d9dee4"/>'
        )
        parts.append(_text(left - 6, y + 4, str(tick), anchor="end"))
    for i, (start, counter) in enumerate(zip(hours, counts, strict=True)):
        x = left + i * bar_w + 2
        y = top + plot_h
        for status in statuses:
            n = counter.get(status, 0)
            if not n:
                continue
            h = plot_h * n / peak
            y -= h
            parts.append(
                f'<rect class="bar" data-status="{escape(status)}" data-count="{n}" '
                f'x="{x:.1f}" y="{y:.1f}" width="{bar_w - 4:.1f}" height="{h:.1f}" '
                f'fill="{COLOURS.get(status, "#66707c")}"><title>{escape(start.strftime("%H:00"))}'
                f" {escape(status)}: {n}</title></rect>"
            )
        parts.append(_text(x + (bar_w - 4) / 2, height - bottom + 14, start.strftime("%H:00"),
                           anchor="middle"))  # fmt: skip
    x = left
    for status in statuses:
        parts.append(
            f'<rect x="{x}" y="{height + 8}" width="10" height="10" '
            f'fill="{COLOURS.get(status, "#66707c")}"/>'
        )
        parts.append(_text(x + 14, height + 17, status))
        x += 14 + 7 * len(status) + 16
    parts.append("</svg>")
    return "".join(parts)


def quantile_bars(rows: Sequence[tuple[str, Sequence[float]]], labels: Sequence[str]) -> str:
    """One row per lane (`provider / kind`), a bar per quantile on one shared scale."""
    width, row_h, left = 720, 22 * len(labels) + 14, 190
    height = max(1, len(rows)) * row_h + 10
    peak = max([max(q) for _, q in rows if q] + [1.0])
    scale = (width - left - 80) / peak
    shades = ("#9db5e6", "#5a83d6", "#2457c5")
    parts = [
        f'<svg class="chart" role="img" aria-label="time from intent to end, per provider and '
        f'kind" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg">'
    ]
    for r, (lane, values) in enumerate(rows):
        y0 = 6 + r * row_h
        parts.append(_text(0, y0 + 14, lane, fill="#1d232b"))
        if not values:
            parts.append(_text(left, y0 + 14, "none ended yet"))
            continue
        for i, (label, value) in enumerate(zip(labels, values, strict=True)):
            y = y0 + i * 22
            w = max(1.0, value * scale)
            title = f"{lane} {label}: {seconds_text(value)}"
            parts.append(
                f'<rect class="bar" data-quantile="{escape(label)}" x="{left}" y="{y + 3}" '
                f'width="{w:.1f}" height="16" fill="{shades[i % len(shades)]}">'
                f"<title>{escape(title)}</title></rect>"
            )
            parts.append(_text(left + w + 6, y + 15, f"{label} {seconds_text(value)}"))
    parts.append("</svg>")
    return "".join(parts)
