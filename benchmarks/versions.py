"""This tree against hookline 0.1, in one process: what a ``Runner.run`` costs, and how
many calls into the project it makes.

Run ``python -m benchmarks.versions`` from a git checkout (``--quick`` for a smoke run).

It checks 0.1 (commit ``f1ecd60``, ``--commit`` to choose another) out with ``git
worktree add --detach`` into a temporary directory, imports that tree's ``hooks`` and
``runner`` beside this tree's, and removes the worktree when done. Both packages keep
their own names, so the two versions are swapped in ``sys.modules``: each is imported
with the other's modules taken out, its modules are kept aside, and each version's runs
(timed or counted) happen with its own modules in ``sys.modules``, so that an import
made while a run goes on finds that version's.

Four scenarios, the same in both versions: one ``Agent`` whose model is a
``ScriptedModel`` and whose one tool is ``add(a, b)``, run by one ``Runner`` with its
in-memory sessions (a new session per run; emptied between samples):

* ``model-only``: the model answers at once (its ``default``);
* ``model->tool->model``: the model calls ``add`` (a rule on the user message), then
  answers with the tool's result (a rule on the tool message);
* each of the two again with one callback on the runner, whose ``before_model`` and
  ``before_tool`` return ``Cont(ctx)`` (the version's own ``Cont``).

It prints the µs per run of each version and their ratio (this / 0.1); the target is
at most 1.15x for both scenarios without callbacks. Then the calls into the project
per run: the calls of Python functions whose code lives in files under the version's
``hooks/`` or ``runner/`` (counted with ``sys.setprofile``; a generator's or
coroutine's later resumes are counted apart, as resumes), the files they live in, the
changes of file (calls made from a project function in another file: a call entering
the project from outside is no change) and the deepest stack of project frames.

How it times: a sample is one loop of back-to-back runs of one version and scenario
(``time.perf_counter_ns``) sized to about ``--sample-ms``; a figure is the best sample
of ``--repeat``, divided by the runs in it. Samples of all eight contenders are taken
round-robin, so load from elsewhere hits both versions alike. The cyclic GC is off while
timing. Before timing, both versions must give the same answer in every scenario.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import inspect
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, Final

import hooks
import runner

__all__ = ["main"]

BASELINE: Final = "f1ecd60"  # hookline 0.1
TARGET_MAX: Final = 1.15  # this / 0.1, for both scenarios without callbacks
CALLS_MAX: Final = 130  # calls into the project per model-only run, this tree
PACKAGES: Final = ("hooks", "runner")

MODEL_ONLY: Final = "model-only"
TOOL: Final = "model->tool->model"
SCENARIOS: Final = (MODEL_ONLY, f"{MODEL_ONLY}, 1 callback", TOOL, f"{TOOL}, 1 callback")
TARGETED: Final = (MODEL_ONLY, TOOL)
THIS: Final = "this"
OLD: Final = "0.1"  # the baseline's label (its commit's, when another is asked for)

ANSWER: Final = "4"  # the model-only answer
ADD_PROMPT: Final = "add 2 and 3"


def add(a: int, b: int) -> int:
    """The tool: adds two integers."""
    return a + b


# -- the two versions -----------------------------------------------------------------


@dataclass
class Version:
    """One version's ``hooks`` and ``runner``, with every module of theirs, kept aside."""

    label: str
    root: Path  # the directory holding its hooks/ and runner/
    modules: dict[str, ModuleType]

    @property
    def hooks(self) -> Any:
        return self.modules["hooks"]

    @property
    def runner(self) -> Any:
        return self.modules["runner"]

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The start of every path of this version's project files."""
        return tuple(str(self.root / package) + "/" for package in PACKAGES)


def _ours(name: str) -> bool:
    return name.split(".", 1)[0] in PACKAGES


def _taken_out() -> dict[str, ModuleType]:
    """Remove the loaded ``hooks`` and ``runner`` modules from ``sys.modules``; return them."""
    names = [name for name in sys.modules if _ours(name)]
    return {name: sys.modules.pop(name) for name in names}


@contextlib.contextmanager
def installed(version: Version) -> Iterator[None]:
    """Put ``version``'s modules in ``sys.modules`` for the block; put back what was there."""
    before = _taken_out()
    sys.modules.update(version.modules)
    try:
        yield
    finally:
        version.modules.update(_taken_out())  # with any module it imported meanwhile
        sys.modules.update(before)


def this_version() -> Version:
    """This tree's version: the ``hooks`` and ``runner`` imported by this module."""
    root = Path(inspect.getfile(hooks)).resolve().parent.parent
    if Path(inspect.getfile(runner)).resolve().parent.parent != root:
        msg = "hooks and runner come from different trees"
        raise RuntimeError(msg)
    modules = {name: module for name, module in sys.modules.items() if _ours(name)}
    return Version(THIS, root, modules)


def import_version(label: str, root: Path) -> Version:
    """Import the ``hooks`` and ``runner`` under ``root`` beside the ones already loaded."""
    before = _taken_out()
    sys.path.insert(0, str(root))
    try:
        importlib.invalidate_caches()
        for package in PACKAGES:
            importlib.import_module(package)
        modules = _taken_out()
    finally:
        sys.path.remove(str(root))
        _taken_out()
        sys.modules.update(before)
        importlib.invalidate_caches()
    for name, module in modules.items():
        where = Path(getattr(module, "__file__", None) or "").resolve()
        if root.resolve() not in where.parents:
            msg = f"{name} was imported from {where}, not from {root}"
            raise RuntimeError(msg)
    return Version(label, root, modules)


@contextlib.contextmanager
def checked_out(commit: str, repository: Path) -> Iterator[Path]:
    """A detached git worktree of ``commit``, removed (with its directory) afterwards."""
    git = shutil.which("git")
    if git is None:
        msg = "git is needed to check out the baseline; it is not on PATH"
        raise RuntimeError(msg)
    parent = Path(tempfile.mkdtemp(prefix="hookline-versions-"))
    path = parent / "baseline"
    try:
        added = subprocess.run(
            [git, "-C", str(repository), "worktree", "add", "--detach", str(path), commit],
            check=False,
            capture_output=True,
            text=True,
        )
        if added.returncode != 0:
            msg = f"git worktree add {commit} failed: {added.stderr.strip()}"
            raise RuntimeError(msg)
        try:
            yield path
        finally:
            subprocess.run(
                [git, "-C", str(repository), "worktree", "remove", "--force", str(path)],
                check=False,
                capture_output=True,
            )
    finally:
        shutil.rmtree(parent, ignore_errors=True)
        subprocess.run(
            [git, "-C", str(repository), "worktree", "prune"], check=False, capture_output=True
        )


# -- the scenarios --------------------------------------------------------------------


@dataclass
class Scenario:
    """One version's runner for one scenario, and the run it times."""

    runner: Any
    prompt: str
    expected: str
    sessions: Any

    def run(self) -> str:
        return str(self.runner.run(self.prompt).output)

    def close(self) -> None:
        close: Callable[[], object] | None = getattr(self.runner, "close", None)
        if close is not None:
            close()


def pass_through(version: Version) -> object:
    """The one callback: ``before_model`` and ``before_tool`` return ``Cont(ctx)``."""
    cont = version.hooks.Cont

    class PassThrough:
        __slots__ = ()

        def before_model(self, ctx: object) -> object:
            return cont(ctx)

        def before_tool(self, ctx: object) -> object:
            return cont(ctx)

    return PassThrough()


def scenarios(version: Version) -> dict[str, Scenario]:
    """The four scenarios, built with ``version``'s classes."""
    run = version.runner
    with installed(version):
        made: dict[str, Scenario] = {}
        for name in SCENARIOS:
            tool = name.startswith(TOOL)
            if tool:
                model = run.ScriptedModel(
                    rules=[
                        run.Rule("add", tool="add", args={"a": "2", "b": "3"}),
                        run.Rule(".*", reply="{content}", on="tool"),
                    ]
                )
            else:
                model = run.ScriptedModel(default=ANSWER)
            agent = run.Agent("assistant", model, tools=[add])
            callbacks = [pass_through(version)] if name.endswith("callback") else []
            sessions = run.InMemorySessions()
            made[name] = Scenario(
                run.Runner(agent, callbacks=callbacks, sessions=sessions),
                ADD_PROMPT if tool else "hello",
                "5" if tool else ANSWER,
                sessions,
            )
        for name, scenario in made.items():
            answer = scenario.run()
            if answer != scenario.expected:
                msg = f"{version.label} {name}: answered {answer!r}, expected {scenario.expected!r}"
                raise RuntimeError(msg)
    return made


# -- timing ---------------------------------------------------------------------------


@dataclass
class Contender:
    """One version in one scenario: its samples, in ns per run."""

    version: Version
    scenario: Scenario
    count: int = 1
    samples: list[float] = field(default_factory=list[float])

    def sample(self, count: int) -> float:
        """Run ``count`` times back to back; ns per run. The sessions are emptied after."""
        run = self.scenario.run
        with installed(self.version):
            started = time.perf_counter_ns()
            for _ in range(count):
                run()
            elapsed = time.perf_counter_ns() - started
            self.scenario.sessions.clear()
        return elapsed / count


def calibrate(contender: Contender, sample_ns: int) -> int:
    """A run count that makes one sample of ``contender`` take about ``sample_ns``."""
    count = 1
    while True:
        per_run = contender.sample(count)
        if per_run * count * 8 >= sample_ns or count >= 1 << 16:
            return max(1, round(sample_ns / max(per_run, 1.0)))
        count *= 4


def measure(contenders: list[Contender], *, repeat: int, sample_ns: int) -> None:
    """``repeat`` samples of every contender, round-robin, into each one's ``samples``."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        for contender in contenders:
            contender.count = calibrate(contender, sample_ns)
        for round_ in range(repeat):
            shift = round_ * 3 % len(contenders)
            for contender in contenders[shift:] + contenders[:shift]:
                contender.samples.append(contender.sample(contender.count))
    finally:
        if enabled:
            gc.enable()


# -- counting calls -------------------------------------------------------------------

_RESUMABLE: Final = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@dataclass
class Calls:
    """The calls into the project of some runs, and what they crossed."""

    calls: int = 0
    resumes: int = 0
    changes: int = 0
    depth: int = 0
    files: set[str] = field(default_factory=set[str])


def count_calls(version: Version, scenario: Scenario, runs: int) -> Calls:
    """What ``runs`` runs of ``scenario`` call in ``version``'s project files."""
    prefixes = version.prefixes
    seen: dict[int, FrameType] = {}  # generator and coroutine frames already entered
    found = Calls()

    def inside(frame: FrameType) -> bool:
        return frame.f_code.co_filename.startswith(prefixes)

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or not inside(frame):
            return
        code = frame.f_code
        if code.co_flags & _RESUMABLE:
            if id(frame) in seen:
                found.resumes += 1
                return
            seen[id(frame)] = frame
        found.calls += 1
        found.files.add(code.co_filename)
        depth = 1
        caller: FrameType | None = None
        back = frame.f_back
        while back is not None:
            if inside(back):
                depth += 1
                if caller is None:
                    caller = back
            back = back.f_back
        found.depth = max(found.depth, depth)
        if caller is not None and caller.f_code.co_filename != code.co_filename:
            found.changes += 1

    with installed(version):
        sys.setprofile(profile)
        try:
            for _ in range(runs):
                scenario.run()
        finally:
            sys.setprofile(None)
            scenario.sessions.clear()
    return found


# -- report ---------------------------------------------------------------------------


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report_times(timings: Mapping[tuple[str, str], float], old: str) -> None:
    """Print µs per run of both versions in each scenario, and their ratios."""
    print(f"{'µs per run (best sample)':<34}{THIS:>10}{old:>10}{f'this/{old}':>11}")
    for name in SCENARIOS:
        ours, theirs = timings[name, THIS], timings[name, OLD]
        print(f"{name:<34}{ours / 1000:>10.1f}{theirs / 1000:>10.1f}{ours / theirs:>10.2f}x")
    print()
    print(f"target: this/{old} at most {TARGET_MAX}x in {' and '.join(TARGETED)}")
    for name in TARGETED:
        ratio = timings[name, THIS] / timings[name, OLD]
        print(f"   {name:<30} {ratio:5.2f}x  {_verdict(ratio <= TARGET_MAX)}")
    print()


def report_calls(counted: Mapping[tuple[str, str], Calls], runs: int, old: str) -> None:
    """Print the calls into the project per run of both versions in each scenario."""
    print(
        "calls into the project per run (functions in hooks/ and runner/ files; "
        f"averaged over {runs} runs)"
    )
    header = ("calls", "resumes", "files", "file changes", "max depth")
    print(f"{'':<43}" + "".join(f"{title:>14}" for title in header))
    for name in SCENARIOS:
        for label in (THIS, OLD):
            found = counted[name, label]
            shown = THIS if label == THIS else old
            cells = (
                f"{found.calls / runs:g}",
                f"{found.resumes / runs:g}",
                str(len(found.files)),
                f"{found.changes / runs:g}",
                str(found.depth),
            )
            print(
                f"{name if label == THIS else '':<34}{shown:<9}"
                + "".join(f"{cell:>14}" for cell in cells)
            )
    calls = counted[MODEL_ONLY, THIS].calls / runs
    print()
    print(
        f"target: at most {CALLS_MAX} calls per {MODEL_ONLY} run in this tree: "
        f"{calls:g}  {_verdict(calls <= CALLS_MAX)}"
    )
    print()


# -- main -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Check 0.1 out, measure both versions and print; returns 0 (a miss is reported)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.versions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="few short samples: a smoke run")
    parser.add_argument("--commit", default=BASELINE, help=f"the baseline (default {BASELINE})")
    parser.add_argument(
        "--repeat", type=int, default=None, help="samples per contender (best is kept)"
    )
    parser.add_argument("--sample-ms", type=float, default=None, help="target length of one sample")
    args = parser.parse_args(argv)
    repeat: int = (3 if args.quick else 15) if args.repeat is None else args.repeat
    sample_ms: float = (2.0 if args.quick else 40.0) if args.sample_ms is None else args.sample_ms
    if repeat < 1 or sample_ms <= 0:
        parser.error("--repeat and --sample-ms must be positive")
    runs = 1 if args.quick else 5

    this = this_version()
    label = OLD if args.commit == BASELINE else args.commit
    started = time.perf_counter()
    with checked_out(args.commit, this.root) as root:
        old = import_version(OLD, root)
        made = {THIS: scenarios(this), OLD: scenarios(old)}
        versions = {THIS: this, OLD: old}
        try:
            print(
                f"hookline versions benchmark: this tree ({this.root}) against {label} "
                f"(commit {args.commit}), one process, Python {platform.python_version()} "
                f"({platform.python_implementation()}); {'quick' if args.quick else 'full'} "
                f"mode, best of {repeat} samples of ~{sample_ms:g} ms"
            )
            print()
            contenders = {
                (name, label): Contender(versions[label], made[label][name])
                for name in SCENARIOS
                for label in (THIS, OLD)
            }
            measure(list(contenders.values()), repeat=repeat, sample_ns=round(sample_ms * 1e6))
            report_times({key: min(each.samples) for key, each in contenders.items()}, label)
            counted = {
                (name, label): count_calls(versions[label], made[label][name], runs)
                for name in SCENARIOS
                for label in (THIS, OLD)
            }
            report_calls(counted, runs, label)
            spreads = [
                statistics.median(each.samples) / min(each.samples) - 1
                for each in contenders.values()
            ]
            print(
                f"noise: median sample vs best sample: typically "
                f"+{statistics.median(spreads):.0%}, at most +{max(spreads):.0%}; "
                "well above +10% means the machine was busy: rerun"
            )
        finally:
            for label, each in made.items():
                with installed(versions[label]):
                    for scenario in each.values():
                        scenario.close()
    print(f"measured in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
