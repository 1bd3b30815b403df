"""The base models of every door's typed operations.

Inputs are strict: unknown fields refused, no type coercion. Outputs are built with
`extra="ignore"` so a service adding a field never breaks a result, and advertised with
`additionalProperties: false` because only declared fields are ever dumped.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Id = Annotated[str, Field(json_schema_extra={"format": "uuid"})]
Count = Annotated[int, Field(ge=0)]


class StrictInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Output(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": False})

    def to_structured(self) -> dict:
        # exclude_unset: an optional `error` appears only when something failed.
        return self.model_dump(mode="json", exclude_unset=True)
