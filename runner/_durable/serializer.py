"""``JSONSerializer``: DBOS's serializer for durable runs, JSON through ``runner._durable.codec``.

DBOS stores each workflow's inputs, output and error and each step's output and error
through the serializer of its config, pickle unless told otherwise. Given this one
(``DurableRunner.serializer()``), what it writes is the codec's tagged JSON and what
it reads is decoded by the codec: a record that is not one is a ``ValueError``, never
unpickled. It stores what a durable run stores, JSON's own values and errors; any other
value (of a workflow of the application's own, say) is a ``TypeError`` naming it.
"""

from __future__ import annotations

from typing import Any, Final, final

from dbos import Serializer

from runner._durable.codec import dump, load

__all__ = ["NAME", "JSONSerializer"]

NAME: Final = "hookline_json"  # what DBOS writes in a record's ``serialization`` column


@final
class JSONSerializer(Serializer):
    """DBOS values as the durable codec's JSON; reading refuses anything else."""

    def serialize(self, data: Any) -> str:
        """``data`` as the codec's JSON text."""
        return dump(data)

    def deserialize(self, serialized_data: str) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        """The value ``serialize`` wrote; a ``ValueError`` for any other text."""
        return load(serialized_data)

    def name(self) -> str:
        """``hookline_json``."""
        return NAME
