"""Eight one-sentence topics, and a query that means the first without sharing a word with
any of them (only vectors can find it): for the model-switch, refinement and crash tests."""

from __future__ import annotations

TOPICS = [
    "The harbour lantern guides fishing boats home at night.",
    "Granite cliffs rise above the alpine meadow.",
    "The baker kneads sourdough bread before dawn.",
    "Copper wires carry electric current through the circuit.",
    "A willow tree bends over the quiet river.",
    "Saffron gives the rice dish its golden colour.",
    "The violinist tunes her instrument before the concert.",
    "Thistles and nettles cover the abandoned farm.",
]
QUERY = "lighthouse beacon ships darkness"
