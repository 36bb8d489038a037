"""``Budget``: a run spends at most so many tokens, dollars, tool calls and model calls.

Before a model call the budget reserves what the call may cost -- the model's output
bound (``max_tokens``) plus an estimate of the request's input (``estimate_tokens``) --
and refuses the call unless what is spent, what other calls in flight hold and this
reservation fit the limits. When the call has answered, the reservation is settled:
what the response's ``Usage`` says it cost replaces it. So concurrent calls (gathered
tools, sub-agents) never overrun the limit together, and the most a run can overrun it
by is what the answers in flight used beyond their own reservations (a model that
ignores its bound, an input larger than estimated). A tool call counts against
``tool_calls`` before it runs. Everything lives in the run's state under ``key``
(sub-agents share it; a paused run's ``RunState`` carries it; a durable run rebuilds it
alike on replay).

A call that never ran costs nothing: halted or paused by a later callback, or failed at
the provider (an error carries no usage). A response that reports no usage costs its
reservation; an error hook's fallback answer without usage costs nothing. When a run
stops, the calls it cancels in flight keep what they hold (``tokens_held``,
``usd_held``): they may have been billed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final, cast, final

from returns.result import Failure, Success

from hooks._contexts import ModelContext, ToolContext
from hooks._decisions import Reject
from hooks._errors import StopRun
from hooks._events import HookEvent
from hooks._messages import ModelResponse, ToolResult, Usage
from hooks._policies.estimate import Sizes, estimate_tokens
from hooks._results import BeforeResult, Cont, Halt
from hooks._state import State, StateKey

__all__ = ["Budget"]

_PICO: Final = 10**12  # amounts of money are kept in whole pico-dollars: sums stay exact
_PER_TOKEN: Final = _PICO // 10**6  # a price per million tokens, in pico-dollars per token
_FIELDS: Final = (
    "tokens",
    "tokens_held",
    "usd",
    "usd_held",
    "model_calls",
    "tool_calls",
    "refused",
)
_EMPTY: Final[Mapping[str, int]] = dict.fromkeys(_FIELDS, 0)
_ANY: Final = "*"


@final
class _Held:
    """What one model call holds of the budget until it settles."""

    __slots__ = ("fell_back", "tokens", "usd")

    def __init__(self, tokens: int, usd: int) -> None:
        self.tokens = tokens
        self.usd = usd
        self.fell_back = False  # an error hook answered in the model's place


@final
class Budget:
    """Limits a run's ``tokens`` (input + output), ``usd``, ``tool_calls`` and
    ``model_calls`` (at least one limit; ``None`` is no limit).

    ``usd`` needs ``prices``: for each model name, its USD per million input and output
    tokens, ``{"gpt-4o": (2.50, 10.00)}`` (cached input tokens are priced as input). A
    response is priced by its ``model``: the name itself, else the longest name in
    ``prices`` followed by ``-`` that it starts with (``gpt-4o-2024-08-06`` is
    ``gpt-4o``), else ``"*"``; a response that names no model by ``"*"`` or the only
    price. A reservation is priced at the highest prices given. ``max_tokens`` is the
    output bound the agents' models are given (``AnthropicModel``'s default is 4096);
    ``key`` names the budget's entry in the run's state.

    ``model_calls`` counts the calls sent to a model, failed ones too (a call's retries
    are one call). A model call the budget cannot hold raises ``StopRun``: the run ends with
    ``status == "stopped"`` and ``stop_reason`` saying which limit is spent. A tool call
    beyond ``tool_calls`` is halted with an error result the model reads. Each refusal
    is counted in the state (``refused``). It belongs in the guard tier, first at every
    point (``guard(Budget(...))``): it is correct anywhere, but a callback before it can
    halt, pause or change a call it never sees.
    """

    __slots__ = (
        "_in",
        "_key",
        "_out",
        "_prices",
        "_sizes",
        "_usd",
        "max_tokens",
        "model_calls",
        "prices",
        "tokens",
        "tool_calls",
        "usd",
    )

    def __init__(
        self,
        *,
        tokens: int | None = None,
        usd: float | None = None,
        tool_calls: int | None = None,
        model_calls: int | None = None,
        prices: Mapping[str, tuple[float, float]] | None = None,
        max_tokens: int = 4096,
        key: str = "hookline.budget",
    ) -> None:
        limits = {"tokens": tokens, "tool_calls": tool_calls, "model_calls": model_calls}
        for name, value in limits.items():
            _check_limit(name, value)
        bound: object = max_tokens
        if type(bound) is not int or max_tokens < 1:
            msg = f"Budget's max_tokens must be an int >= 1, got {bound!r:.60}"
            raise ValueError(msg)
        if tokens is None and usd is None and tool_calls is None and model_calls is None:
            msg = "Budget needs a limit: tokens=, usd=, tool_calls= or model_calls="
            raise ValueError(msg)
        checked: dict[str, tuple[int, int]] = {}
        if usd is not None:
            _check_amount("usd", usd)
            if prices is None:
                msg = "Budget's usd= needs prices=: {model: (USD per 1M input, per 1M output)}"
                raise ValueError(msg)
            checked = _checked_prices(prices)
        elif prices is not None:
            msg = "Budget's prices= price the usd= limit, which is not set"
            raise ValueError(msg)
        given: object = key
        if not isinstance(given, str) or not given:
            msg = f"Budget's key must be a non-empty str, got {given!r:.60}"
            raise TypeError(msg)
        self.tokens: Final = tokens
        self.usd: Final = usd
        self.tool_calls: Final = tool_calls
        self.model_calls: Final = model_calls
        self.prices: Final = dict(prices) if prices is not None else None
        self.max_tokens: Final = max_tokens
        self._usd: Final = None if usd is None else round(usd * _PICO)
        self._prices: Final = checked  # pico-dollars per input and output token
        self._in: Final = max((price[0] for price in checked.values()), default=0)
        self._out: Final = max((price[1] for price in checked.values()), default=0)
        self._key: Final = StateKey[dict[str, int]](key)
        self._sizes: Final = Sizes()

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Reserve what the call may cost; raise ``StopRun`` if the budget cannot hold it."""
        calls = ctx.call_state
        held: _Held | None = calls.get(self._key.name)
        metered = self.tokens is not None or self.usd is not None
        input_tokens = estimate_tokens(ctx.request, self._sizes) if metered else 0
        tokens = input_tokens + self.max_tokens if metered else 0
        usd = input_tokens * self._in + self.max_tokens * self._out
        refusal: list[str] = []

        def reserve(current: dict[str, int] | None) -> dict[str, int]:
            spent = _entry(current, self._key.name)
            # A retry whose request changed comes back here: its new reservation
            # replaces the old, and it is no new model call.
            old_tokens, old_usd = (0, 0) if held is None else (held.tokens, held.usd)
            reason = self._refusal(
                spent, (tokens, old_tokens), (usd, old_usd), input_tokens, new=held is None
            )
            if reason is not None:
                refusal.append(reason)
                spent["refused"] += 1
                return spent
            spent["tokens_held"] += tokens - old_tokens
            spent["usd_held"] += usd - old_usd
            spent["model_calls"] += 1 if held is None else 0
            return spent

        ctx.invocation.state.update(self._key, reserve)
        if refusal:
            raise StopRun(refusal[0])
        if held is None:
            calls.set(self._key.name, _Held(tokens, usd))
        else:
            held.tokens, held.usd = tokens, usd
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Count the call; halt it with an error result when ``tool_calls`` are spent (a
        call a human rejected is not counted: it does not run)."""
        limit = self.tool_calls
        calls = ctx.call_state
        if self._key.name in calls or type(ctx.decision) is Reject:
            return Cont(ctx)  # counted already (a changed retry), or a human refused it
        refused = False

        def count(current: dict[str, int] | None) -> dict[str, int]:
            nonlocal refused
            spent = _entry(current, self._key.name)
            refused = limit is not None and spent["tool_calls"] >= limit
            spent["refused" if refused else "tool_calls"] += 1
            return spent

        ctx.invocation.state.update(self._key, count)
        if refused:
            message = (
                f"the run's budget of {limit} tool call(s) is spent: {ctx.call.name} was not "
                "called; answer with what you have"
            )
            return Halt(ToolResult(message, is_error=True))
        calls.set(self._key.name, True)
        return Cont(ctx)

    def on_event(self, event: HookEvent, /) -> None:
        """Give back what a call that never ran holds; settle a model call that answered."""
        ctx = event.context
        if not isinstance(ctx, ModelContext | ToolContext):
            return
        calls = ctx.call_state
        name = self._key.name
        point, outcome = event.point, event.outcome
        if point in ("before_model", "before_tool"):
            if outcome in ("halt", "pause", "raised"):  # a later callback stopped the call
                self._release(ctx, calls.pop(name, None))
        elif point == "after_model":  # how the call ended, as it was billed
            self._settle(ctx, calls.pop(name, None), event.given)
        elif point == "on_model_error":
            held = calls.get(name)
            if not isinstance(held, _Held):
                return
            if outcome == "fallback":
                held.fell_back = True
            elif outcome == "raised":  # the call ends here, with no answer
                self._release(ctx, calls.pop(name, None))
        elif point == "wrap_model" and outcome == "raised":
            held = calls.pop(name, None)  # whether the model answered inside is unknown
            if isinstance(held, _Held):
                self._charge(ctx, held, held.tokens, held.usd)

    def spent(self, state: State | Mapping[str, Any], /) -> dict[str, int | float]:
        """What ``state`` (a run's ``State``, or ``RunState.data``) says the run spent:
        ``tokens``, ``usd``, ``model_calls``, ``tool_calls``, and ``refused`` (the calls
        refused)."""
        found: object = state.get(self._key.name)
        entry = cast("Mapping[str, int]", found) if isinstance(found, dict) else _EMPTY
        return {
            "tokens": entry.get("tokens", 0),
            "usd": entry.get("usd", 0) / _PICO,
            "model_calls": entry.get("model_calls", 0),
            "tool_calls": entry.get("tool_calls", 0),
            "refused": entry.get("refused", 0),
        }

    def _refusal(
        self,
        spent: Mapping[str, int],
        tokens: tuple[int, int],
        usd: tuple[int, int],
        input_tokens: int,
        *,
        new: bool,
    ) -> str | None:
        """Why a model call is refused, or ``None``: ``tokens`` and ``usd`` are what it
        would hold and what it holds already (a retry's earlier reservation)."""
        if new and self.model_calls is not None and spent["model_calls"] >= self.model_calls:
            return (
                f"Budget refused a model call: the run's {self.model_calls} model call(s) are made"
            )
        limit = self.tokens
        if limit is not None:
            left = limit - spent["tokens"] - spent["tokens_held"] + tokens[1]
            if tokens[0] > left:
                return (
                    f"Budget refused a model call: it may use {tokens[0]:,} token(s) "
                    f"(~{input_tokens:,} input, max_tokens={self.max_tokens:,}) and "
                    f"{max(left, 0):,} of {limit:,} are left"
                )
        cap = self._usd
        if cap is not None:
            left = cap - spent["usd"] - spent["usd_held"] + usd[1]
            if usd[0] > left:
                return (
                    f"Budget refused a model call: it may cost ${usd[0] / _PICO:.6f} "
                    f"(~{input_tokens:,} input tokens, max_tokens={self.max_tokens:,}) and "
                    f"${max(left, 0) / _PICO:.6f} of ${self.usd} is left"
                )
        return None

    def _release(self, ctx: ModelContext | ToolContext, held: object) -> None:
        """Give back what a call that never ran holds (a tool call's count included)."""
        if held is True:
            self._update(ctx, _uncount)
        elif isinstance(held, _Held):
            self._charge(ctx, held, 0, 0, counted=False)

    def _settle(self, ctx: ModelContext | ToolContext, held: object, given: object) -> None:
        """Replace the reservation with what the call's outcome says it cost."""
        if not isinstance(held, _Held):
            return
        if type(given) is Failure:
            self._charge(ctx, held, 0, 0)  # the provider's error bills nothing
            return
        response = cast("Success[object]", given).unwrap() if isinstance(given, Success) else None
        if not isinstance(response, ModelResponse):
            self._charge(ctx, held, held.tokens, held.usd)
            return
        usage = response.usage
        if usage is None:
            cost = (0, 0) if held.fell_back else (held.tokens, held.usd)
            self._charge(ctx, held, *cost)
            return
        if self.usd is None:
            self._charge(ctx, held, usage.total_tokens, 0)
            return
        price = self._price(response.model)
        if price is None:
            self._charge(ctx, held, usage.total_tokens, held.usd)
            known = ", ".join(repr(name) for name in self._prices)
            msg = (
                f"Budget has no price for model {response.model!r} (prices has {known}); "
                "add it, or a '*' price for any other model"
            )
            raise StopRun(msg)
        self._charge(ctx, held, usage.total_tokens, _cost(usage, price))

    def _charge(
        self,
        ctx: ModelContext | ToolContext,
        held: _Held,
        tokens: int,
        usd: int,
        *,
        counted: bool = True,
    ) -> None:
        """Drop ``held`` and spend ``tokens`` and ``usd`` (``counted``: the call was made)."""

        def charge(spent: dict[str, int]) -> None:
            spent["tokens_held"] -= held.tokens
            spent["usd_held"] -= held.usd
            spent["tokens"] += tokens
            spent["usd"] += usd
            spent["model_calls"] -= 0 if counted else 1

        self._update(ctx, charge)

    def _update(
        self, ctx: ModelContext | ToolContext, change: Callable[[dict[str, int]], None]
    ) -> None:
        def changed(current: dict[str, int] | None) -> dict[str, int]:
            spent = _entry(current, self._key.name)
            change(spent)
            return spent

        ctx.invocation.state.update(self._key, changed)

    def _price(self, model: str | None) -> tuple[int, int] | None:
        """The prices of ``model`` (pico-dollars per input and output token), or ``None``."""
        prices = self._prices
        if model is None:
            if len(prices) == 1:
                return next(iter(prices.values()))
            return prices.get(_ANY)
        price = prices.get(model)
        if price is not None:
            return price
        stems = [name for name in prices if model.startswith(f"{name}-")]
        if stems:
            return prices[max(stems, key=len)]
        return prices.get(_ANY)

    def __repr__(self) -> str:
        limits = [
            f"{name}={value!r}"
            for name, value in (
                ("tokens", self.tokens),
                ("usd", self.usd),
                ("tool_calls", self.tool_calls),
                ("model_calls", self.model_calls),
            )
            if value is not None
        ]
        return f"Budget({', '.join(limits)})"


def _entry(current: object, key: str) -> dict[str, int]:
    """A copy of the budget's entry in the run's state (``None``: nothing spent yet)."""
    if current is None:
        return dict(_EMPTY)
    found = cast("dict[object, object]", current) if type(current) is dict else None
    if (
        found is None
        or found.keys() != _EMPTY.keys()
        or any(type(value) is not int for value in found.values())
    ):
        msg = (
            f"the run's state holds {current!r:.80} under {key!r}, which is no Budget's "
            "entry: does another callback use that key?"
        )
        raise TypeError(msg)
    return cast("dict[str, int]", found).copy()


def _uncount(spent: dict[str, int]) -> None:
    spent["tool_calls"] -= 1


def _cost(usage: Usage, price: tuple[int, int]) -> int:
    return usage.input_tokens * price[0] + usage.output_tokens * price[1]


def _check_limit(name: str, value: object) -> None:
    if value is not None and (type(value) is not int or value < 0):
        msg = f"Budget's {name} must be None or an int >= 0, got {value!r:.60}"
        raise ValueError(msg)


def _check_amount(name: str, value: object) -> float:
    if (type(value) is not int and type(value) is not float) or not 0 <= value < math.inf:
        msg = f"Budget's {name} must be a finite number >= 0, got {value!r:.60}"
        raise ValueError(msg)
    return value


def _checked_prices(prices: object) -> dict[str, tuple[int, int]]:
    """``prices`` as pico-dollars per input and output token, each checked."""
    if not isinstance(prices, Mapping) or not prices:
        msg = (
            "Budget's prices must be a non-empty mapping of model names to "
            f"(USD per 1M input tokens, USD per 1M output tokens), got {prices!r:.60}"
        )
        raise TypeError(msg)
    checked: dict[str, tuple[int, int]] = {}
    entries = cast("Mapping[object, object]", prices).items()
    for name, price in entries:
        if not isinstance(name, str) or not name:
            msg = f"Budget's prices are keyed by model name (a non-empty str), got {name!r:.60}"
            raise TypeError(msg)
        parts = tuple(cast("tuple[object, ...]", price)) if isinstance(price, tuple | list) else ()
        if len(parts) != 2:
            msg = (
                f"Budget's price of {name!r} must be (USD per 1M input tokens, USD per 1M "
                f"output tokens), got {price!r:.60}"
            )
            raise TypeError(msg)
        amounts = [_check_amount(f"price of {name!r}", part) for part in parts]
        checked[name] = (round(amounts[0] * _PER_TOKEN), round(amounts[1] * _PER_TOKEN))
    return checked
