"""Drawing primitives shared by every game's table picture: canvas, text, cards, piles, score pads, the pygame window.

Each game's ``render.py`` builds its picture from these (``draw_table(game,
seat, last_action) -> uint8[H, W, 3]``); the env's ``render_mode="rgb_array"``
returns that array and ``"human"`` shows it in a :class:`HumanWindow`.

Everything is drawn with Pillow's ``ImageDraw`` and the font bundled with
Pillow (``ImageFont.load_default(size=...)``), so no asset is downloaded and
the same state always gives the same bytes.  Picture widths and heights are
multiples of 16, the macro block of the H.264 encoder, so video frames are
written without resizing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

# ------------------------------------------------------------------ palette
BACKGROUND = (24, 94, 62)  # card-table felt
PANEL = (32, 112, 76)
PANEL_ACTIVE = (58, 140, 98)
HEADER = (18, 60, 42)
INK = (30, 30, 30)
LIGHT = (244, 244, 236)
MUTED = (190, 214, 198)
HIGHLIGHT = (255, 210, 63)  # whose turn it is
CARD_FACE = (253, 251, 244)
CARD_FACE_HIDDEN = (214, 212, 222)  # a face-down card's face, as only the spectator sees it
CARD_BACK = (120, 28, 40)
CARD_BACK_LINE = (170, 64, 74)
SPECTATOR = (255, 150, 60)
SEAT_VIEW = (120, 200, 255)

BLOCK = 16  # picture sizes are multiples of this (H.264 macro block)

Color = tuple[int, int, int]


@lru_cache(maxsize=32)
def font(size: int) -> ImageFont.FreeTypeFont:
    """Return Pillow's bundled font at ``size`` pixels (cached)."""
    return ImageFont.load_default(size=size)


def round_up(value: int, block: int = BLOCK) -> int:
    """Return ``value`` rounded up to a multiple of ``block``."""
    return -(-int(value) // block) * block


def canvas(width: int, height: int, color: Color = BACKGROUND) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """Return a new RGB picture (sizes rounded up to multiples of 16) and its drawing context."""
    image = Image.new("RGB", (round_up(width), round_up(height)), color)
    return image, ImageDraw.Draw(image)


def to_array(image: Image.Image) -> np.ndarray:
    """Return ``image`` as a C-contiguous ``uint8[H, W, 3]`` array."""
    return np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))


def text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], value: str, size: int = 16, fill: Color = LIGHT,
         anchor: str = "la", bold: bool = False) -> float:
    """Draw ``value`` at ``xy`` (Pillow anchor, default left-ascender) and return its width in pixels."""
    f = font(size)
    stroke = 1 if bold and size >= 14 else 0
    draw.text(xy, value, font=f, fill=fill, anchor=anchor, stroke_width=stroke, stroke_fill=fill)
    return draw.textlength(value, font=f) + 2 * stroke


def text_width(value: str, size: int = 16) -> float:
    """Return the width in pixels of ``value`` at ``size``."""
    return font(size).getlength(value)


def fit_text(value: str, width: float, size: int = 16) -> str:
    """Return ``value``, cut with an ellipsis so that it fits ``width`` pixels at ``size``."""
    if text_width(value, size) <= width:
        return value
    while value and text_width(value + "...", size) > width:
        value = value[:-1]
    return value + "..."


def panel(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], fill: Color = PANEL,
          outline: Color | None = None, width: int = 3, radius: int = 10) -> None:
    """Draw a rounded panel (a seat's area); ``outline`` marks the seat to act."""
    draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline, width=width if outline else 0)


def badge(draw: ImageDraw.ImageDraw, xy: tuple[float, float], value: str, fill: Color, ink: Color = INK, size: int = 13) -> float:
    """Draw a small rounded label with its top-left at ``xy`` and return its width."""
    w = text_width(value, size) + 12
    x, y = xy
    draw.rounded_rectangle((x, y, x + w, y + size + 8), radius=(size + 8) // 2, fill=fill)
    draw.text((x + 6, y + 4), value, font=font(size), fill=ink)
    return w


# -------------------------------------------------------------------- cards
@dataclass(frozen=True)
class CardFace:
    """What a face-up card shows: a big ``label`` (its value), its ``color``, a ``caption`` and an optional ``footer`` band.

    ``icon`` names a small picture drawn in the middle (:func:`draw_icon`), ``center`` a big text there instead;
    ``hidden`` marks a card its owner's seat could not see (spectator views draw
    it with a striped band so it still reads as face down).
    """

    label: str
    color: Color
    caption: str = ""
    icon: str | None = None
    footer: str = ""
    footer_color: Color = HIGHLIGHT
    hidden: bool = False
    center: str = ""


def draw_icon(draw: ImageDraw.ImageDraw, name: str, cx: float, cy: float, r: float, color: Color) -> None:
    """Draw the suit picture ``name`` centred on ``(cx, cy)`` with radius ``r``."""
    if name == "wreath":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=color, width=max(3, int(r / 2.6)))
        draw.ellipse((cx - 3, cy + r - 5, cx + 3, cy + r + 1), fill=(200, 30, 40))  # the bow
    elif name == "noise":
        # A horn: a mouthpiece, then a widening bell.
        draw.polygon([(cx - r, cy - r / 4), (cx + r / 3, cy - r), (cx + r / 3, cy + r), (cx - r, cy + r / 4)], fill=color)
        for k in (1, 2):
            d = r / 3 + k * r / 3
            draw.arc((cx + r / 3 - d, cy - d, cx + r / 3 + d, cy + d), -40, 40, fill=color, width=2)
    elif name == "ornament":
        draw.ellipse((cx - r, cy - r * 0.8, cx + r, cy + r * 1.2), fill=color)
        draw.rectangle((cx - r / 3, cy - r * 1.15, cx + r / 3, cy - r * 0.8), fill=(200, 170, 60))
        draw.arc((cx - r * 0.55, cy - r * 0.35, cx + r * 0.15, cy + r * 0.35), 180, 270, fill=(255, 255, 255), width=2)
    elif name == "present":
        draw.rectangle((cx - r, cy - r * 0.7, cx + r, cy + r), fill=color)
        draw.rectangle((cx - r / 5, cy - r * 0.7, cx + r / 5, cy + r), fill=(255, 215, 80))
        draw.rectangle((cx - r, cy + r * 0.05, cx + r, cy + r * 0.35), fill=(255, 215, 80))
        draw.ellipse((cx - r * 0.6, cy - r * 1.15, cx, cy - r * 0.65), outline=(255, 215, 80), width=2)
        draw.ellipse((cx, cy - r * 1.15, cx + r * 0.6, cy - r * 0.65), outline=(255, 215, 80), width=2)
    elif name == "hazard":
        draw.polygon([(cx, cy - r), (cx + r, cy + r * 0.8), (cx - r, cy + r * 0.8)], fill=color)
        draw.text((cx, cy + r * 0.2), "!", font=font(int(r * 1.3)), fill=(255, 255, 255), anchor="mm")
    elif name == "mulligan":
        for k in range(5):
            a = np.pi / 2 + k * 2 * np.pi / 5
            draw.ellipse((cx + r * 0.55 * np.cos(a) - r * 0.38, cy - r * 0.55 * np.sin(a) - r * 0.38,
                          cx + r * 0.55 * np.cos(a) + r * 0.38, cy - r * 0.55 * np.sin(a) + r * 0.38), fill=color)
    else:
        raise ValueError(f"unknown card icon {name!r}: use wreath, noise, ornament, present, hazard or mulligan")


@lru_cache(maxsize=16)
def _card_back(w: int, h: int) -> Image.Image:
    """Return a card's back, ``w`` x ``h`` RGBA (transparent corners): a frame and a lattice of small diamonds."""
    image = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    radius = max(4, int(w / 9))
    draw.rounded_rectangle((0, 0, w - 1, h - 1), radius=radius, fill=CARD_BACK, outline=(250, 240, 230), width=2)
    draw.rounded_rectangle((6, 6, w - 7, h - 7), radius=max(2, radius - 3), outline=CARD_BACK_LINE, width=2)
    step = max(8, int(w / 5))
    for row, cy in enumerate(np.arange(12, h - 10, step / 1.4)):
        for cx in np.arange(12 + (step / 2 if row % 2 else 0), w - 10, step):
            d = step / 4
            draw.polygon([(cx, cy - d), (cx + d, cy), (cx, cy + d), (cx - d, cy)], fill=CARD_BACK_LINE)
    return image


def draw_card(draw: ImageDraw.ImageDraw, x: float, y: float, w: float, h: float, face: CardFace | None,
              highlight: Color | None = None) -> None:
    """Draw one card with its top-left at ``(x, y)``: ``face`` up, or its back when ``face`` is ``None``."""
    box = (x, y, x + w, y + h)
    radius = max(4, int(w / 9))
    if face is None:
        back = _card_back(int(w), int(h))
        draw._image.paste(back, (int(x), int(y)), back)  # ImageDraw keeps its image; pasting a cached back is 20x faster
        if highlight:
            draw.rounded_rectangle(box, radius=radius, outline=highlight, width=3)
        return
    draw.rounded_rectangle(box, radius=radius, fill=CARD_FACE_HIDDEN if face.hidden else CARD_FACE, outline=face.color, width=3)
    footer, footer_color = (("face down", CARD_BACK) if face.hidden else (face.footer, face.footer_color))
    big = max(12, int(h * 0.3))
    draw.text((x + 6, y + 3), face.label, font=font(big), fill=face.color, stroke_width=1, stroke_fill=face.color)
    body_bottom = y + h - (16 if footer else 4)
    if face.center:
        draw.text((x + w / 2, y + h * 0.6 - (6 if footer else 0)), face.center, font=font(int(h * 0.36)), fill=face.color,
                  anchor="mm", stroke_width=1, stroke_fill=face.color)
    elif face.icon:
        r = min(w, h) * 0.19
        draw_icon(draw, face.icon, x + w / 2, y + h * 0.58 - (6 if footer else 0) + (4 if face.caption else 0) - 4, r, face.color)
    if face.caption:
        draw.text((x + w / 2, body_bottom - 2), fit_text(face.caption, w - 6, 10), font=font(10), fill=INK, anchor="md")
    if footer:
        # A spectator sees a face-down card's face; its band says it lies face down (in place of any bonus band).
        draw.rectangle((x + 3, y + h - 17, x + w - 3, y + h - 4), fill=footer_color)
        draw.text((x + w / 2, y + h - 10), fit_text(footer, w - 8, 11), font=font(11), fill=LIGHT if face.hidden else INK, anchor="mm")
    if highlight:
        draw.rounded_rectangle(box, radius=radius, outline=highlight, width=3)


def draw_pile(draw: ImageDraw.ImageDraw, x: float, y: float, w: float, h: float, faces: Sequence[CardFace | None],
              max_width: float, label: str = "", empty: str = "empty") -> float:
    """Draw a pile fanned left to right (bottom card first, top card whole) within ``max_width``; return the width used.

    An empty pile is an outline with ``empty`` in it; ``label`` is written above.
    """
    if label:
        draw.text((x, y - 4), label, font=font(13), fill=MUTED, anchor="ld")
    if not faces:
        draw.rounded_rectangle((x, y, x + w, y + h), radius=max(4, int(w / 9)), outline=MUTED, width=2)
        draw.text((x + w / 2, y + h / 2), empty, font=font(12), fill=MUTED, anchor="mm")
        return w
    step = min(w * 0.42, (max_width - w) / max(1, len(faces) - 1)) if len(faces) > 1 else 0
    for i, face in enumerate(faces):
        draw_card(draw, x + i * step, y, w, h, face)
    return w + step * (len(faces) - 1)


def draw_stack(draw: ImageDraw.ImageDraw, x: float, y: float, w: float, h: float, count: int, label: str) -> None:
    """Draw a face-down stack of ``count`` cards (a few offset backs) and ``label`` under it."""
    layers = min(4, max(1, count // 12 + 1)) if count else 0
    if not count:
        draw.rounded_rectangle((x, y, x + w, y + h), radius=max(4, int(w / 9)), outline=MUTED, width=2)
    for k in range(layers):
        draw_card(draw, x + 3 * (layers - 1 - k), y + 3 * (layers - 1 - k), w, h, None)
    draw.text((x + w / 2, y + h + 8), label, font=font(13), fill=LIGHT, anchor="ma")


def draw_table_grid(draw: ImageDraw.ImageDraw, x: float, y: float, headers: Sequence[str], rows: Sequence[Sequence[str]],
                    widths: Sequence[float], row_height: float = 24, active_row: int | None = None,
                    bold_last: bool = True, size: int = 14) -> float:
    """Draw a score pad: a header line, then one line per row (``active_row`` highlighted); return its height."""
    total = sum(widths)
    draw.rounded_rectangle((x, y, x + total, y + row_height * (len(rows) + 1)), radius=6, fill=(250, 248, 238))
    draw.rectangle((x, y, x + total, y + row_height), fill=(60, 60, 60))
    cx = x
    for head, w in zip(headers, widths):
        draw.text((cx + w / 2, y + row_height / 2), fit_text(head, w - 4, size - 2), font=font(size - 2), fill=LIGHT, anchor="mm")
        cx += w
    for r, row in enumerate(rows):
        top = y + row_height * (r + 1)
        if r == active_row:
            draw.rectangle((x, top, x + total, top + row_height), fill=(255, 236, 160))
        elif r % 2:
            draw.rectangle((x, top, x + total, top + row_height), fill=(236, 234, 222))
        cx = x
        for c, (cell, w) in enumerate(zip(row, widths)):
            bold = bold_last and c == len(row) - 1
            draw.text((cx + w / 2, top + row_height / 2), fit_text(cell, w - 4, size), font=font(size), fill=INK, anchor="mm",
                      stroke_width=1 if bold else 0, stroke_fill=INK)
            cx += w
    return row_height * (len(rows) + 1)


def view_banner(draw: ImageDraw.ImageDraw, x: float, y: float, seat: int | None, hidden_note: str, spectator_note: str) -> float:
    """Draw who this picture is for and return its width: the spectator (``spectator_note``) or one seat (``hidden_note``)."""
    if seat is None:
        return badge(draw, (x, y), f"SPECTATOR VIEW: {spectator_note}", SPECTATOR, size=14)
    return badge(draw, (x, y), f"VIEW OF player_{seat}: {hidden_note}", SEAT_VIEW, size=14)


def check_seat(seat: object, num_players: int) -> int | None:
    """Return ``seat`` if it is ``None`` (spectator) or a seat in ``0..num_players-1``, else raise ``ValueError``."""
    if seat is None:
        return None
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < num_players:
        raise ValueError(f"render_seat must be None (the spectator, who sees every card) or a seat in 0..{num_players - 1}, got {seat!r}")
    return int(seat)


# ------------------------------------------------------------- human window
class HumanWindow:
    """A pygame window showing the latest frame (``render_mode="human"``); opened on the first frame, paced at ``fps``.

    With SDL's ``dummy`` video driver (headless machines, tests) nothing can be
    seen, so frames are not paced.
    """

    def __init__(self, title: str, fps: float) -> None:
        self.title = title
        self.fps = fps
        self.screen = None
        self.clock = None

    def show(self, frame: np.ndarray) -> None:
        """Draw ``frame`` (``uint8[H, W, 3]``) in the window and handle its events."""
        try:
            import pygame
        except ImportError:
            raise ImportError('render_mode="human" opens a pygame window: pip install pygame (or grinch_env[render])') from None
        h, w = frame.shape[:2]
        if self.screen is None:
            pygame.init()
            pygame.display.set_caption(self.title)
            self.screen = pygame.display.set_mode((w, h))
            self.clock = pygame.time.Clock()
        elif self.screen.get_size() != (w, h):
            self.screen = pygame.display.set_mode((w, h))
        surface = pygame.surfarray.make_surface(np.transpose(frame, (1, 0, 2)))
        self.screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        if os.environ.get("SDL_VIDEODRIVER") != "dummy":
            self.clock.tick(self.fps)

    def close(self) -> None:
        """Close the window (if one was opened)."""
        if self.screen is not None:
            import pygame

            pygame.display.quit()
            self.screen = None


__all__ = [
    "BACKGROUND", "CardFace", "HumanWindow", "badge", "canvas", "check_seat", "draw_card", "draw_icon", "draw_pile", "draw_stack",
    "draw_table_grid", "fit_text", "font", "panel", "round_up", "text", "text_width", "to_array", "view_banner",
]
