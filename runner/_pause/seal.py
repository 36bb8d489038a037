"""A paused ``RunState``'s signature: an HMAC over its JSON, so it may travel outside the store.

A runner given ``state_keys`` signs each state it pauses with the first key
(``"hmac-sha256:"`` and the hex digest of HMAC-SHA256 over the state's JSON written
without its signature) and accepts a state the store does not hold only when one of
its keys verifies it. Keys rotate by putting the new key first and keeping the old
ones after it until the states they signed are resumed or dropped; a key removed
from the list verifies nothing any more.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import replace
from typing import Final, cast

from runner._pause.runstate import RunState

__all__ = ["MIN_KEY_BYTES", "checked_keys", "sign", "verified"]

MIN_KEY_BYTES: Final = 32
"""The shortest state key taken: 256 bits, HMAC-SHA256's own strength."""

_PREFIX: Final = "hmac-sha256:"


def checked_keys(keys: object) -> tuple[bytes, ...]:
    """``keys`` as a tuple of byte strings of at least ``MIN_KEY_BYTES``; anything else refused,
    naming its type and never its value (a key is a secret)."""
    if isinstance(keys, str | bytes) or not isinstance(keys, Sequence):
        # Only the type is shown: the value may be a secret.
        msg = (
            f"state_keys must be a list of bytes keys (the first signs), got {type(keys).__name__}"
        )
        raise TypeError(msg)
    checked: list[bytes] = []
    for index, key in enumerate(cast("Sequence[object]", keys)):
        if type(key) is not bytes:
            msg = (
                f"state_keys[{index}] must be bytes (e.g. secrets.token_bytes(32)), "
                f"got {type(key).__name__}"
            )
            raise TypeError(msg)
        if len(key) < MIN_KEY_BYTES:
            msg = f"state_keys[{index}] must be at least {MIN_KEY_BYTES} bytes, got {len(key)}"
            raise ValueError(msg)
        checked.append(key)
    return tuple(checked)


def _digest(state: RunState, key: bytes) -> str:
    text = replace(state, signature="").to_json()
    return _PREFIX + hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def sign(state: RunState, key: bytes) -> RunState:
    """``state`` signed with ``key``."""
    return replace(state, signature=_digest(state, key))


def verified(state: RunState, keys: Sequence[bytes]) -> bool:
    """Whether one of ``keys`` signed ``state`` exactly as it is (compared in constant time)."""
    signature = state.signature
    if not signature.startswith(_PREFIX):
        return False
    return any(hmac.compare_digest(_digest(state, key), signature) for key in keys)
