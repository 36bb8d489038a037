"""A point's payload types must be the classes of its type parameters."""

from dataclasses import dataclass

from hooks import BeforePoint


@dataclass(frozen=True)
class Page:
    html: str


@dataclass(frozen=True)
class FetchContext:
    url: str


BEFORE_FETCH = BeforePoint[FetchContext, Page]("before_fetch", context=Page)  # E: [arg-type] Argument "context" to "BeforePoint" has incompatible type "type[Page]"; expected "type[FetchContext] | None"
