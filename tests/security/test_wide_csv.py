"""CSV files whose shape, not their size, chose the memory their reading took: a 10 MB row of
"cell," was 2 million str objects in the csv module's row (50 bytes and more each) and then
2 million word pieces in the chunker's list, 390 MiB in all; a file of short rows cost 15
times its size. Now a long row reaches the csv module in pieces and the chunker packs its
pieces as they come, so reading and chunking cost a few times the file, whatever its shape
(the text and the chunks kept at the end are in the count)."""

from __future__ import annotations

import pytest

from bunko.chunking import chunk_text
from bunko.parsing import parse
from tests.security.memory import RssGrowth

pytestmark = pytest.mark.slow  # 4 MiB files parsed and chunked, memory measured

MIB = 1024 * 1024
SHAPES = {
    "one-row-of-800k-cells": b"cell," * (4 * MIB // 5) + b"\n",
    "160k-rows-of-5-cells": b"cell,cell,cell,cell,cell\n" * (4 * MIB // 25),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_reading_and_chunking_a_csv_costs_a_few_times_its_size(shape):
    data = SHAPES[shape]
    with RssGrowth() as rss:
        parsed = parse(data, filename="sheet.csv")
        chunks = chunk_text(parsed.text, chunk_size=1000, chunk_overlap=200)
    assert len(chunks) > 4_000 and parsed.text.startswith("cell\tcell")
    times = rss.growth / len(data)
    print(f"{shape}: memory rose {times:.1f} times the file's size")
    assert times < 10, (
        f"memory rose {rss.growth // MIB} MiB reading a {len(data) / MIB:.0f} MiB CSV"
    )
