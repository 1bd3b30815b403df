-- Where later pages (PDF pages, slides, sheets) begin inside a chunk: JSON [[offset, page], ...]
-- in document offsets, NULL when the chunk sits on one page, so a quoted sentence cites its
-- own page. Chunks stored before this have NULL: their start page, as before.
ALTER TABLE chunks ADD COLUMN page_breaks TEXT;
