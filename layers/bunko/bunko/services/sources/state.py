"""What a source's last sync saw (its pages' validators, a drive's items, a listing stopped
midway), kept between runs in the settings store in parts, so it grows past one record's
bound (a DynamoDB item holds 400 KB: about 2,500 Confluence pages' state).

- `source_state/<id>` is the head: the generation of the state and how many parts it has.
- `source_state_parts/<id>/<generation>/<n>` holds the n-th slice of the state's JSON.
- A save writes the new generation's parts, then the head (the one write that switches to
  them), then deletes the old generation's parts: a run that stops between two writes
  leaves the last state whole, never half of two.
- A head written before the parts existed is the state itself (one record): it is read as
  it is, and the next save writes it in parts (the migration).

Every save writes the whole state again: a sync's cost in writes grows with the state
(one write per part), not with what changed.
"""

from __future__ import annotations

import json
from typing import Any

from bunko.domain import new_id
from bunko.ports import SettingsStore

STATE_SCOPE = "source_state"
PARTS_SCOPE = "source_state_parts"
# ASCII JSON in slices of this many characters: the part record's own JSON escapes a quote
# or a backslash (two characters each at worst), so a part stays under 400 KB.
PART_CHARS = 150_000
_HEAD = "__parts"


class SyncStates:
    def __init__(self, store: SettingsStore) -> None:
        self.store = store

    def load(self, source_id: str) -> dict[str, Any]:
        head = self.store.get_settings(STATE_SCOPE, source_id)
        if head is None:
            return {}
        if _HEAD not in head:
            return head  # one record, as kept before parts
        owners = _owners(source_id, head["generation"], head[_HEAD])
        found = self.store.get_many_settings(PARTS_SCOPE, owners)
        if len(found) != len(owners):
            raise RuntimeError(f"source {source_id}: its sync state lacks parts")
        return json.loads("".join(found[o]["s"] for o in owners))

    def save(self, source_id: str, state: dict[str, Any]) -> None:
        text = json.dumps(state, ensure_ascii=True, separators=(",", ":"))
        slices = [text[i : i + PART_CHARS] for i in range(0, len(text), PART_CHARS)] or ["{}"]
        old = self.store.get_settings(STATE_SCOPE, source_id)
        generation = new_id()
        for owner, piece in zip(_owners(source_id, generation, len(slices)), slices, strict=True):
            self.store.put_settings(PARTS_SCOPE, owner, {"s": piece})
        self.store.put_settings(
            STATE_SCOPE, source_id, {_HEAD: len(slices), "generation": generation}
        )
        if old is not None and _HEAD in old:
            self._drop(source_id, old)

    def forget(self, source_id: str) -> None:
        head = self.store.get_settings(STATE_SCOPE, source_id)
        self.store.delete_settings(STATE_SCOPE, source_id)
        if head is not None and _HEAD in head:
            self._drop(source_id, head)

    def _drop(self, source_id: str, head: dict[str, Any]) -> None:
        for owner in _owners(source_id, head["generation"], head[_HEAD]):
            self.store.delete_settings(PARTS_SCOPE, owner)


def _owners(source_id: str, generation: str, parts: int) -> list[str]:
    return [f"{source_id}/{generation}/{n:05}" for n in range(parts)]
