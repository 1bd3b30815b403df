"""The HTTP surface: one FastAPI app, deployed embedded, behind Mangum and under uvicorn."""
