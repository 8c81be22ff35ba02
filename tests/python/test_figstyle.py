"""Long titles and legend labels stay inside the image (multiconn.figstyle)."""

from __future__ import annotations

import io

import matplotlib
import pytest

from multiconn.figstyle import RC, TITLE_POINTS, chars_per_line, legend_below, new_figure, title_text, wrap_text

LONG_CAPTION = ("stack ∈ {aioquic NewReno, default buffer, aioquic NewReno, 25 MB buffer, "
                "TCP NewReno, TCP CUBIC, ngtcp2 NewReno, ngtcp2 CUBIC}")


def test_wrap_keeps_every_line_within_the_width_and_every_word() -> None:
    text = wrap_text(f"A title\n{LONG_CAPTION}", 40)
    assert all(len(line) <= 40 for line in text.split("\n"))
    assert text.replace("\n", " ").split() == f"A title {LONG_CAPTION}".split()
    assert text.split("\n")[0] == "A title"  # an explicit line break is kept


@pytest.mark.parametrize("width_in", [4.0, 6.4, 9.0])
def test_a_long_title_and_legend_are_drawn_inside_the_figure(width_in: float) -> None:
    with matplotlib.rc_context(RC):
        fig, axes = new_figure(1, width_in=width_in)
        labels = [f"{name}, a rather long series label number {i}"
                  for i, name in enumerate(("aioquic NewReno", "TCP CUBIC", "ngtcp2"))]
        handles = [axes[0].plot([0, 1], [i, i + 1])[0] for i in range(3)]
        axes[0].set_ylabel("goodput (Mbit/s)")
        axes[0].set_title(title_text("Throughput vs DC batch size", LONG_CAPTION, width_in),
                          fontsize=TITLE_POINTS)
        legend_below(fig, handles, labels, "stack")
        fig.savefig(io.BytesIO(), format="png")  # lays the figure out
        renderer = fig.canvas.get_renderer()
        box = fig.bbox
        for artist in (axes[0].title, *fig.legends):
            extent = artist.get_window_extent(renderer)
            assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, artist
            assert box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1, artist


def test_narrower_figures_get_fewer_characters_per_line() -> None:
    assert chars_per_line(4.0, 10) < chars_per_line(6.4, 10) < chars_per_line(9.0, 10)
