"""The shift drawn, not tabulated: win over the shift and rounds per hour, as inline SVG.

No script library and no inline style (the pages' Content-Security-Policy allows neither):
shapes with presentation attributes and classes the stylesheet colours. Pure functions of the
series, so a test reads the drawing's numbers back from its text.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from controller.web.app import money

WIDTH, HEIGHT, PAD = 640, 180, 34


def _axis(low: int, high: int) -> tuple[int, int]:
    """The value range drawn: always including zero, never empty."""
    low, high = min(low, 0), max(high, 0)
    return (low, high) if high > low else (low, low + 1)


def win_chart(steps: Sequence[int], label: str) -> Markup:
    """Cumulative win (minor units) at the end of each step, as a line over the zero line."""
    low, high = _axis(min(steps, default=0), max(steps, default=0))
    span_x = max(1, len(steps))
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def y(value: int) -> float:
        return PAD + inner_h * (high - value) / (high - low)

    points = [(PAD, y(0))] + [(PAD + inner_w * (i + 1) / span_x, y(v))
                              for i, v in enumerate(steps)]
    path = " ".join(f"{x:.1f},{v:.1f}" for x, v in points)
    last = steps[-1] if steps else 0
    return Markup(
        '<svg class="chart win" viewBox="0 0 {w} {h}" role="img" aria-label="{label}">'
        '<title>{label}</title>'
        '<line class="zero" x1="{p}" x2="{r}" y1="{z:.1f}" y2="{z:.1f}"/>'
        '<polyline class="line" points="{path}" fill="none"/>'
        '<text class="axis" x="4" y="{top}">{high}</text>'
        '<text class="axis" x="4" y="{bottom}">{low}</text>'
        '<text class="value" x="{r}" y="{ty}" text-anchor="end" data-win="{last_raw}">'
        'win {last}</text></svg>').format(
        w=WIDTH, h=HEIGHT, label=label, p=PAD, r=WIDTH - PAD, z=y(0), path=path,
        top=PAD - 6, bottom=HEIGHT - PAD + 16, high=money(high), low=money(low),
        ty=PAD - 6, last=money(last), last_raw=last)


def rounds_chart(per_hour: Sequence[int], label: str) -> Markup:
    """Rounds ended in each hour of the shift, as bars."""
    top = max(max(per_hour, default=0), 1)
    count = max(1, len(per_hour))
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    slot = inner_w / count
    bars = []
    for index, value in enumerate(per_hour):
        height = inner_h * value / top
        x = PAD + index * slot + slot * 0.1
        bars.append(Markup('<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" '
                           'height="{bh:.1f}" data-rounds="{v}"><title>hour {n}: {v} rounds'
                           '</title></rect>').format(x=x, y=PAD + inner_h - height,
                                                     bw=slot * 0.8, bh=height, v=value,
                                                     n=index + 1))
    return Markup(
        '<svg class="chart rounds" viewBox="0 0 {w} {h}" role="img" aria-label="{label}">'
        '<title>{label}</title>{bars}'
        '<line class="zero" x1="{p}" x2="{r}" y1="{b}" y2="{b}"/>'
        '<text class="axis" x="4" y="{t}">{top}</text></svg>').format(
        w=WIDTH, h=HEIGHT, label=label, bars=Markup("").join(bars), p=PAD, r=WIDTH - PAD,
        b=PAD + inner_h, t=PAD + 4, top=top)
