"""Matched dispatch: 20 matched callbacks of which 1 matches the call, against that 1 alone.

Run ``python -m benchmarks.matchers`` (``--quick`` for a smoke run).

At ``before_tool``, a call of ``search``:

* ``alone``: ``run_before`` over a compiled list of the one callback for ``search``;
* ``view``: what a run does -- the compiled list of 20 callbacks, each ``matched`` to its
  own tool (19 to other tools), asked for its view for the called tool
  (``compiled.for_tool(info)``: a dict lookup once made) and dispatched;
* ``gated``: the same 20 dispatched as a list (``run_before(compiled, ...)`` outside a
  run): every callback's gate asks its match per call. Shown for reference.

Target: ``view`` at most 1.3x ``alone``. How it times: each contender is one statement in
a loop over a preallocated ``itertools.repeat`` (as ``timeit`` does); a sample is one
timed loop (``time.perf_counter_ns``); the figure is the best of ``--repeat`` samples,
taken round-robin across contenders; the cyclic GC is off while timing.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time
from collections.abc import Callable
from typing import Final

from hooks import (
    BEFORE_TOOL,
    Cont,
    Invocation,
    ToolCall,
    ToolContext,
    ToolInfo,
    compile_callbacks,
    matched,
    run_before,
)

TARGET: Final = 1.3
N: Final = 20


class Guard:
    """A before_tool that lets every call through."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        return Cont(ctx)


def _timer(fn: Callable[[], object], loops: int) -> Callable[[], float]:
    def sample() -> float:
        repeat = itertools.repeat(None, loops)
        began = time.perf_counter_ns()
        for _ in repeat:
            fn()
        return (time.perf_counter_ns() - began) / loops

    return sample


def main(argv: list[str] | None = None) -> int:
    """Time the contenders; print ns per dispatch and the ratio against the target."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--loops", type=int, default=20_000)
    args = parser.parse_args(argv)
    repeat, loops = (3, 500) if args.quick else (args.repeat, args.loops)

    names = ["search", *(f"tool_{n}" for n in range(N - 1))]
    infos = {name: ToolInfo(name) for name in names}
    ctx = ToolContext(Invocation("r", "a", "a", tools=infos), ToolCall("c", "search", {}))
    info = ctx.tool
    alone = compile_callbacks([Guard()])
    twenty = compile_callbacks([matched(Guard(), tools=name) for name in names])

    # The contenders agree: one callback runs, the context passes unchanged.
    for result in (
        run_before(alone, BEFORE_TOOL, ctx),
        run_before(twenty.for_tool(info), BEFORE_TOOL, ctx),
        run_before(twenty, BEFORE_TOOL, ctx),
    ):
        assert result == Cont(ctx)
    assert len(twenty.for_tool(info).methods(BEFORE_TOOL)) == 1

    contenders: dict[str, Callable[[], float]] = {
        "alone": _timer(lambda: run_before(alone, BEFORE_TOOL, ctx), loops),
        "view": _timer(lambda: run_before(twenty.for_tool(info), BEFORE_TOOL, ctx), loops),
        "gated": _timer(lambda: run_before(twenty, BEFORE_TOOL, ctx), loops),
    }
    best = dict.fromkeys(contenders, float("inf"))
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, sample in contenders.items():
                best[name] = min(best[name], sample())
    finally:
        if enabled:
            gc.enable()
    print(f"Python {sys.version.split()[0]}; before_tool, {N} matched callbacks, 1 matching")
    for name, ns in best.items():
        print(f"  {name:<6} {ns:8.1f} ns/dispatch")
    ratio = best["view"] / best["alone"]
    verdict = "met" if ratio <= TARGET else "missed"
    print(f"view/alone: {ratio:.2f}x (target <= {TARGET}x: {verdict})")
    print(f"gated/alone: {best['gated'] / best['alone']:.2f}x (reference: no view)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
