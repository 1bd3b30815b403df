"""PowerPoint (.pptx): each slide's text and speaker notes; one page per slide."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator

from pptx import Presentation
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape
from pptx.slide import Slide

from bunko.errors import ParseError
from bunko.parsing.document import ParsedDocument, from_pages, invalid
from bunko.parsing.office import check_package


def parse_pptx(data: bytes) -> ParsedDocument:
    check_package(data, "PPTX")
    try:
        presentation = Presentation(io.BytesIO(data))
        pages = [(n, _slide_text(slide)) for n, slide in enumerate(presentation.slides, 1)]
    except ParseError:
        raise
    except Exception as exc:  # python-pptx/lxml/zipfile raise many types for damaged files
        raise invalid("PPTX", exc) from exc
    return from_pages(pages, "PPTX")


def _slide_text(slide: Slide) -> str:
    parts = list(_shape_texts(slide.shapes))
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            parts.append(notes.text)
    return "\n\n".join(part for part in parts if part.strip())


def _shape_texts(shapes: Iterable[BaseShape]) -> Iterator[str]:
    # Groups nest shapes; walk them with a stack, keeping the slide's shape order.
    stack = list(reversed(list(shapes)))
    while stack:
        shape = stack.pop()
        if isinstance(shape, GroupShape):
            stack.extend(reversed(list(shape.shapes)))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield shape.text_frame.text
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = shape.table.rows
            lines = ("\t".join(" ".join(cell.text.split()) for cell in row.cells) for row in rows)
            yield "\n".join(line.rstrip("\t") for line in lines if line.strip())
