"""One run: the agent turn loop, written once as coroutines and driven two ways.

``Runner.arun`` awaits ``Run.run`` on the running event loop. ``Runner.run``
drives the very same coroutine with one ``send(None)`` (``complete``): in a sync run
nothing the loop awaits ever suspends (sync model, tools and dispatch, ``time.sleep``
between retries), so the coroutine finishes in that one step with no event loop.

Order of hook points: ``before_agent`` -> loop { guarded model call -> for each tool
call { guarded tool call } } -> ``after_agent`` (the guarded operation: ``_guarded``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any, Final, TypeVar, assert_never, final

from hooks import (
    AFTER_AGENT,
    AFTER_OUTPUT,
    BEFORE_AGENT,
    ON_OUTPUT_ERROR,
    AgentContext,
    CompiledCallbacks,
    Cont,
    Decision,
    Failure,
    Halt,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    State,
    StopRun,
    Success,
    ToolSpec,
)
from runner._agent import Agent
from runner._errors import (
    MaxStepsExceeded,
    OutputValidationError,
    ResumeRefused,
)
from runner._events import (
    ErrorEvent,
    ModelResponseEvent,
    RunResult,
    RunStatus,
    StopEvent,
    UserMessageEvent,
)
from runner._pause.pending import Frame, HeldBatch, Paused
from runner._pause.runstate import RunState
from runner._pause.seal import sign, verified
from runner._records.lines import Kept
from runner._run.attempts import model_attempt
from runner._run.callbacks import AgentSetup
from runner._run.calls import batch
from runner._run.engine import IN_PROCESS
from runner._run.guarded import MODEL, guarded
from runner._run.offload import OffLoop
from runner._run.output import typed_answer
from runner._run.plan import Plan
from runner._run.record import Record
from runner._run.resume import describe
from runner._run.settings import Settings
from runner._run.streamed import Streamed, Waiting, settle_output
from runner._run.toolbox import Toolbox
from runner._run.tracer import RECORDING
from runner._sessions.leases import RunLease
from runner._sessions.store import Session, SessionStore
from runner._sessions.transcript import Conversation, Transcript, answered, settled
from runner._tools.output import OutputInvalid

__all__ = ["Run"]

logger: Final = logging.getLogger("runner")

T = TypeVar("T")

_NOTHING: Final[Mapping[str, Any]] = MappingProxyType({})


@final
class Run:
    """The state of one run: ids, settings, the shared state, the record, the step count."""

    __slots__ = (
        "_callbacks",
        "_plans",
        "_setups",
        "_state_keys",
        "decisions",
        "deps",
        "id",
        "lease",
        "offload",
        "opened",
        "outputs",
        "record",
        "released",
        "session_id",
        "sessions",
        "settings",
        "state",
        "steps",
        "user_id",
    )

    def __init__(
        self,
        *,
        run_id: str,
        user_id: str,
        session_id: str,
        setups: Mapping[int, AgentSetup],
        settings: Settings,
        sessions: SessionStore,
        lease: RunLease | None,
        callbacks: tuple[CompiledCallbacks, ...] = (),
        state_keys: tuple[bytes, ...] = (),
        offload: OffLoop | None = None,
    ) -> None:
        self.id: Final = run_id
        self._callbacks: Final = callbacks  # the runner's and the run's, recorded on a pause
        self._state_keys: Final = state_keys  # the first signs a paused state, all verify
        self.user_id: Final = user_id
        self.session_id: Final = session_id
        self._setups: Final = setups  # by agent id
        self.settings: Final = settings
        self.sessions: Final = sessions
        self.lease: Final = lease  # None: a run no other run can name holds no lease
        # An async run on a store that blocks: its store calls, made in a thread.
        self.offload: Final = offload
        # Off the loop, the lease is taken and the session read in one trip to a thread
        # (``open``), and the save and the lease's release made in one: what it read (or
        # the error reading raised), and whether the lease is given back already.
        self.opened: tuple[Session, str | None] | Exception | None = None
        self.released = False
        self.state: Final = State()
        self.record: Final = Record(settings.channel)
        self.steps = 0
        # A resumed run's decisions by request id: the earlier resumes' and this one's.
        self.decisions: Mapping[str, Decision] = _NOTHING
        self._plans: dict[str, Plan] = {}
        # What Runner.run(..., deps=) gave: on every invocation, in every RunContext.
        self.deps: Any = None
        # By branch, the typed answer of an agent with an output_type: its response, its value.
        self.outputs: dict[str, tuple[ModelResponse, Any]] = {}

    def plan(self, agent: Agent, branch: str) -> Plan:
        """The plan of ``agent`` at ``branch``, made once per run."""
        plan = self._plans.get(branch)
        if plan is None:
            settings = self.settings
            hub = settings.hub
            toolbox = (
                None
                if not agent.sources or hub is None
                else Toolbox(agent, hub, is_async=settings.is_async)
            )
            invocation = Invocation(  # id, agent, branch, user_id, session_id, state, tools
                self.id,
                agent.name,
                branch,
                self.user_id,
                self.session_id,
                self.state,
                agent.infos if toolbox is None else toolbox,
                self.deps,
            )
            plan = Plan(agent, invocation, self._setups[id(agent)], settings, toolbox)
            self._plans[branch] = plan
        return plan

    async def run(self, root: Agent, message: Message) -> RunResult:
        """The whole run: the root agent's turn, the session saved, the result."""
        offload = self.offload
        if offload is None:
            session = self.sessions.load(self.user_id, self.session_id)
        elif self.opened is None:
            session = await offload.call(self.sessions.load, self.user_id, self.session_id)
        else:
            session = self._taken()[0]
        if session.state:
            self.state.seed(session.state, scope="session")
        return await self._root_turn(root, session, message, None)

    async def resume(self, root: Agent, state: RunState) -> RunResult:
        """A paused run, on from where it paused, with ``self.decisions`` for its requests."""
        offload = self.offload
        if offload is None:
            session, kept = self._loaded(state.run_id)
        elif self.opened is None:
            session, kept = await offload.call(self._loaded, state.run_id)
        else:
            session, kept = self._taken()
        if session.version != state.session_version:
            raise ResumeRefused.moved_on(state.run_id, session.version, state.session_version)
        if kept is None:
            # A state the store does not hold goes on only signed by one of the keys.
            if not (self._state_keys and verified(state, self._state_keys)):
                problem = (
                    "the session store holds no paused state of it, and it carries no "
                    "signature of this runner's state_keys: a state from outside the store "
                    "must be signed (Runner(..., state_keys=[...]))"
                )
                raise ResumeRefused(state.run_id, problem)
        elif kept != state.to_json():
            # A resume that paused again left a later state, or this one was changed.
            raise ResumeRefused(
                state.run_id,
                "the store keeps another paused state of it: it was resumed already, "
                "or this state was changed",
            )
        frame = state.frame
        assert frame is not None  # checked before the run started
        self.state.seed(session.state, scope="session")
        # Then the run's own values, as they were at the pause, each in its own scope.
        scoped = set(state.session_keys)
        own = state.data.items()
        self.state.seed({key: value for key, value in own if key in scoped}, scope="session")
        self.state.seed({key: value for key, value in own if key not in scoped})
        self.steps = state.steps
        self.settings.meter.add(state.usage)
        return await self._root_turn(root, session, frame.message, frame)

    def _loaded(self, run_id: str) -> tuple[Session, str | None]:
        """The session and the paused state of ``run_id`` the store keeps."""
        return self.sessions.load(self.user_id, self.session_id), self.sessions.load_paused(run_id)

    def open(self, paused: str | None) -> None:
        """Take the lease, then read the session (and the paused state of run ``paused``)
        into ``opened``: one trip to a thread. ``SessionBusy`` and the lease's other errors
        are raised; an error of the read is kept, raised when the run starts."""
        if self.lease is not None:
            self.lease.acquire()
        try:
            if paused is None:
                self.opened = (self.sessions.load(self.user_id, self.session_id), None)
            else:
                self.opened = self._loaded(paused)
        except Exception as error:  # the run raises it, and gives its lease back as it ends
            self.opened = error

    def _taken(self) -> tuple[Session, str | None]:
        """What ``open`` read, or the error it kept, raised."""
        opened = self.opened
        assert opened is not None
        self.opened = None
        if isinstance(opened, Exception):
            raise opened
        return opened

    def let_go(self) -> None:
        """Give the lease back, once; a failure is logged (the lease expires by itself)."""
        lease = self.lease
        if lease is None or self.released:
            return
        self.released = True
        try:
            lease.release()
        except Exception:  # the run's own outcome stands
            logger.exception(
                "could not release the lease of run %s on session %r; it expires in %gs",
                self.id,
                self.session_id,
                lease.ttl,
            )

    async def _root_turn(
        self, root: Agent, session: Session, message: Message, frame: Frame | None
    ) -> RunResult:
        stored = session.messages
        history = Conversation(stored if isinstance(stored, Transcript) else Transcript(stored))
        try:
            response = await self.turn(
                self.plan(root, root.name), message, history, self.record, frame
            )
        except StopRun as stop:
            now = self.settings.engine.now()
            self.record.add(StopEvent(root.name, root.name, now, reason=stop.reason))
            saving = self._save(answered(history.messages), session)
            if saving is not None:
                await saving
            return self._result(root, _none(root), "stopped", stop.reason, None)
        except Paused as paused:
            # The session stays at the version the state builds on (the turn so far
            # travels in the state), and the store keeps the state until it is resumed.
            result = self._result(
                root, _none(root), "paused", None, None, frame=paused.frame, version=session.version
            )
            paused_state = (self.id, self.user_id, self.session_id, result.state.to_json())
            if self.offload is None:
                self.sessions.save_paused(*paused_state)
                self._keep_records()
            else:
                await self.offload.call(self._pause, *paused_state)
            return result
        saving = self._save(settled(history.messages), session)
        if saving is not None:
            await saving
        return self._result(root, self._typed(root, response), "completed", None, response)

    def _typed(self, root: Agent, response: ModelResponse) -> Any:
        """The run's output: the answer's text, or the typed value of an agent with an
        ``output_type`` -- the one its turn checked, or, for an answer a hook gave in its
        place (``before_agent``'s ``Halt``, ``after_agent``'s ``Success``), its text
        checked now (``OutputValidationError`` unless it fits)."""
        output = root.output
        if output is None:
            return response.text
        kept = self.outputs.get(root.name)
        if kept is not None and kept[0] is response:
            return kept[1]
        try:
            return output.from_text(response.text)
        except OutputInvalid as invalid:
            error = OutputValidationError(root.name, repr(output), invalid.errors, invalid.raw, 1)
            error.add_note("the answer came from a hook (before_agent or after_agent)")
            raise error from None

    def turn(
        self,
        plan: Plan,
        message: Message,
        history: Conversation,
        record: Record,
        frame: Frame | None = None,
        *,
        call_id: str | None = None,
    ) -> Awaitable[ModelResponse]:
        """``agent_turn``; in a traced run, inside its ``invoke_agent`` span."""
        tracer = self.settings.tracer
        if tracer is None:
            return self.agent_turn(plan, message, history, record, frame, call_id=call_id)

        async def traced(recording: bool) -> ModelResponse:
            # Only a recording span gets the turn's hook decisions; the flag is this
            # turn's (its context's), not its agent branch's.
            token = RECORDING.set(recording)
            try:
                return await self.agent_turn(plan, message, history, record, frame, call_id=call_id)
            finally:
                RECORDING.reset(token)

        return tracer.agent(plan.agent, plan.invocation, message, traced)

    async def agent_turn(
        self,
        plan: Plan,
        message: Message,
        history: Conversation,
        record: Record,
        frame: Frame | None = None,
        *,
        call_id: str | None = None,
    ) -> ModelResponse:
        """``before_agent``, the model/tool loop, ``after_agent``; raises an unrecovered error.

        With ``frame``, the turn goes on from where it paused (``before_agent`` ran then);
        ``call_id`` is the parent's tool call a sub-agent's turn answers (``None`` for the
        root agent's), named by the turn's streamed deltas.
        """
        base = len(history.messages)
        if frame is None:
            record.add(UserMessageEvent(plan.name, plan.branch, plan.clock(), message=message))
            decision = await plan.before(
                BEFORE_AGENT, AgentContext(plan.invocation, message), record
            )
            match decision:
                case Halt(response):
                    history.messages = history.messages.extend((message, _assistant(response)))
                    record.add(
                        ModelResponseEvent(plan.name, plan.branch, plan.clock(), response=response)
                    )
                    return response
                case Cont(ctx):
                    pass
                case _:
                    assert_never(decision)
            history.messages = history.messages.append(ctx.message)
        else:
            ctx = AgentContext(plan.invocation, frame.message)
            history.messages = history.messages.extend(frame.messages)
        # Only the loop's outcome reaches after_agent: an exception a callback raised
        # propagates as it is, never offered to a hook that could swallow it.
        outcome = await self.loop(plan, history, record, frame, call_id)
        if isinstance(outcome, HeldBatch):  # the turn pauses: after_agent waits for the end
            messages = history.messages
            turn = tuple(messages[index] for index in range(base, len(messages)))
            raise Paused(frame=outcome.frame(plan.agent.name, plan.branch, ctx.message, turn))
        final = await plan.after(AFTER_AGENT, outcome, ctx, record)
        match final:
            case Success(response):
                if type(outcome) is not Success or outcome.unwrap() is not response:
                    # after_agent answered in the loop's place: what the user gets is
                    # the final answer on record and in the session.
                    messages = history.messages
                    if type(outcome) is Success:  # its answer is the last message: replace it
                        messages = messages.prefix(len(messages) - 1)
                    history.messages = messages.append(_assistant(response))
                    record.add(
                        ModelResponseEvent(plan.name, plan.branch, plan.clock(), response=response)
                    )
                return response
            case Failure(error):
                if type(outcome) is not Failure or error is not outcome.failure():
                    record.add(
                        ErrorEvent(
                            plan.name, plan.branch, plan.clock(), error=error, operation="agent"
                        )
                    )
                raise error
            case _:
                assert_never(final)

    async def _step(self, agent: Agent) -> None:
        """Count a model turn (``MaxStepsExceeded`` past the bound); hold the lease on."""
        self.steps += 1
        if self.steps > self.settings.max_steps:
            raise MaxStepsExceeded(agent.name, self.settings.max_steps)
        lease = self.lease
        if lease is not None and lease.due():
            await self._renew(lease)

    async def _renew(self, lease: RunLease) -> None:
        """Hold the session's lease on (off the loop, on a store that blocks)."""
        if self.offload is None:
            lease.acquire()
        else:
            await self.offload.call(lease.acquire)

    async def _refresh(self, toolbox: Toolbox) -> tuple[ToolSpec, ...]:
        """The agent's tools with its servers' listed now; the runner's matches that wait
        for listed tools checked against them."""
        specs = await toolbox.refresh()
        pending = self.settings.pending
        if pending is not None:
            pending.listed(toolbox, toolbox.listed_servers())
        return specs

    async def loop(
        self,
        plan: Plan,
        history: Conversation,
        record: Record,
        frame: Frame | None,
        call_id: str | None = None,
    ) -> Outcome[ModelResponse] | HeldBatch:
        """Model turns until one answers without tool calls, or a model call fails, or
        some calls of a batch paused (the ``HeldBatch`` then says what each came to).

        A resumed turn first finishes the batch of tool calls it paused in.
        """
        agent, settings = plan.agent, self.settings
        toolbox = plan.toolbox
        if frame is not None:
            if toolbox is not None:  # the paused calls' tools listed before they go on
                await self._refresh(toolbox)
            held = await batch(
                self, plan, frame.calls, history, record, step=frame.step, frame=frame
            )
            if held is not None:
                return held
        execute = partial(self._model, plan)
        budget = settings.retry.max_attempts
        output = agent.output
        native = agent.native_output
        answers = 0  # the typed answers checked in this turn
        waiting = self._waiting(plan, call_id)
        while True:
            await self._step(agent)
            specs = agent.specs if toolbox is None else await self._refresh(toolbox)
            request = _request(plan, history, specs)
            outcome, _ = await guarded(
                settings,
                plan,
                MODEL,
                ModelContext(plan.invocation, request, 1, budget),
                execute=execute,
                record=record,
                call_id=call_id,
                waiting=waiting,
            )
            match outcome:
                case Success(response):
                    pass
                case Failure():
                    return outcome
                case _:
                    assert_never(outcome)
            record.add(ModelResponseEvent(plan.name, plan.branch, plan.clock(), response=response))
            history.messages = history.messages.append(_assistant(response))
            if output is not None and (
                not response.tool_calls or (not native and output.final_call(response))
            ):
                answers += 1
                typed = await self._typed_answer(
                    plan, response, history, record, answers, waiting=waiting
                )
                if typed is not None:
                    return typed
                continue  # asked again, told why
            if not response.tool_calls:
                return outcome
            calls = response.tool_calls
            held = await batch(self, plan, calls, history, record, step=self.steps, frame=None)
            if held is not None:
                return held

    async def _typed_answer(
        self,
        plan: Plan,
        response: ModelResponse,
        history: Conversation,
        record: Record,
        attempt: int,
        *,
        waiting: Waiting | None,
    ) -> Outcome[ModelResponse] | None:
        """The turn's outcome for a typed answer (its value kept), or ``None``: ask again.

        A streamed answer ``waiting`` kept goes out now as the output guard decided.
        """
        output = plan.agent.output
        assert output is not None  # only an agent with an output type gives a typed answer
        typed = await typed_answer(
            self.settings, plan, output, response, history=history, record=record, attempt=attempt
        )
        channel = self.settings.channel
        if typed is None:
            if waiting is not None and channel is not None:
                settle_output(channel, waiting, None, own=False)
            return None
        outcome, value, own = typed
        answer = outcome.unwrap() if type(outcome) is Success else None
        if waiting is not None and channel is not None:
            settle_output(channel, waiting, answer, own=own)
        if answer is not None:
            self.outputs[plan.branch] = (answer, value)
        return outcome

    def _waiting(self, plan: Plan, call_id: str | None) -> Waiting | None:
        """What keeps a streamed final answer for the output guard: for an agent with an
        ``output_type`` whose callbacks define ``after_output`` or ``on_output_error``."""
        output = plan.agent.output
        if self.settings.channel is None or output is None:
            return None
        compiled = plan.compiled
        if not (compiled.defines(AFTER_OUTPUT) or compiled.defines(ON_OUTPUT_ERROR)):
            return None
        native = plan.agent.native_output

        def is_final(response: ModelResponse) -> bool:
            if not response.tool_calls:
                return True
            return not native and output.final_call(response) is not None

        return Waiting(is_final, plan.agent.name, plan.branch, call_id)

    async def _model(
        self, plan: Plan, ctx: ModelContext, streamed: Streamed | None
    ) -> Outcome[ModelResponse]:
        """One model attempt through the engine (in place on ``IN_PROCESS``); the tokens of
        its answer counted (a durable run's replayed answer too)."""
        settings = self.settings
        engine = settings.engine
        if engine is IN_PROCESS:  # it would run the attempt here and now: no seam to cross
            outcome = await model_attempt(settings, plan, ctx, streamed)
        else:
            attempt = partial(model_attempt, settings, plan, ctx, streamed)
            outcome = await engine.model(plan.branch, attempt)
        if type(outcome) is Success:
            usage = outcome.unwrap().usage
            if usage is not None:
                settings.meter.add(usage)
        return outcome

    def _save(self, messages: Transcript, session: Session) -> Awaitable[None] | None:
        """The session saved here and now (``None``), or off the loop (to await)."""
        state = self.state.snapshot(scope="session") if len(self.state) else _NOTHING
        # A session that had no state and gets none keeps it so (the save succeeds only if
        # the session is as loaded): no state is written.
        kept = state if state or session.state else None
        if self.offload is None:  # no coroutine to make in a sync run
            self._write(messages, session.version, kept)
            return None
        return self.offload.call(self._write, messages, session.version, kept, True)

    def _pause(self, run_id: str, user_id: str, session_id: str, state_json: str) -> None:
        """The paused state and the records kept, then the lease given back: one trip to a
        thread."""
        self.sessions.save_paused(run_id, user_id, session_id, state_json)
        self._keep_records()
        self.let_go()

    def _write(
        self,
        messages: Transcript,
        version: int,
        state: Mapping[str, Any] | None,
        let_go: bool = False,
    ) -> None:
        """The session's save, the run's records kept and, for a resumed run, its paused
        state forgotten; then, if ``let_go``, the lease given back (off the loop: one trip
        to a thread)."""
        self.sessions.save(self.user_id, self.session_id, messages, version=version, state=state)
        self._keep_records()
        if self.decisions:  # a resumed run that ended: its paused state is done with
            self.sessions.delete_paused(self.id)
        if let_go:
            self.let_go()

    def _keep_records(self) -> None:
        """The run's events handed to its store as its records, if the store keeps them
        (an ``InboxStore``; a 0.2 store has no ``save_records``). A failure is logged:
        the run's outcome stands."""
        save = getattr(self.sessions, "save_records", None)
        if save is None:
            return
        try:
            save(self.id, self.user_id, self.session_id, Kept(tuple(self.record.events)))
        except Exception:  # the session is saved: losing its trace fails no run
            logger.exception("could not keep the records of run %s in its session store", self.id)

    def _result(
        self,
        root: Agent,
        output: Any,
        status: RunStatus,
        reason: str | None,
        response: ModelResponse | None,
        *,
        frame: Frame | None = None,
        version: int = 0,
    ) -> RunResult:
        usage = self.settings.meter.usage
        if len(self.state):
            data = self.state.snapshot()
            session_keys = tuple(self.state.snapshot(scope="session"))
        else:  # nothing was set: no copies to make
            data, session_keys = _NOTHING, ()
        decisions = MappingProxyType(dict(self.decisions)) if self.decisions else _NOTHING
        state = RunState(
            data,
            self.id,
            root.name,
            self.user_id,
            self.session_id,
            status,
            version,
            self.steps,
            frame,
            decisions,
            usage,
            session_keys,
            ()
            if frame is None
            else describe(c for each in self._callbacks for c in each.callbacks),
        )
        if frame is not None and self._state_keys:  # a paused state may travel: signed
            state = sign(state, self._state_keys[0])
        return RunResult(
            output,
            tuple(self.record.events),
            status,
            reason,
            self.session_id,
            response,
            self.id,
            state,
            usage,
            () if frame is None else state.pending,
        )


def _request(plan: Plan, history: Conversation, specs: tuple[ToolSpec, ...]) -> ModelRequest:
    """The model's request: the agent's typed answer asked for natively (``output``) or
    as the final-result tool beside the others."""
    messages = history.messages.headed(plan.system)
    output = plan.agent.output
    if output is None:
        return ModelRequest(messages, specs)
    if plan.agent.native_output:
        return ModelRequest(messages, specs, output.spec)
    return ModelRequest(messages, (*specs, output.tool))


def _none(root: Agent) -> Any:
    """The output of a run that ended before an answer: ``""``, or ``None`` when typed."""
    return "" if root.output is None else None


def _assistant(response: ModelResponse) -> Message:
    return Message("assistant", response.text, tool_calls=response.tool_calls, parts=response.parts)
