"""A result's output is the agent's ``output_type``; a run's deps are its ``deps_type``."""

import dataclasses

from runner import Agent, Runner, ScriptedModel


@dataclasses.dataclass
class Invoice:
    number: str


@dataclasses.dataclass
class Db:
    url: str


typed = Agent("typed", ScriptedModel(), output_type=Invoice)
both = Agent("both", ScriptedModel(), output_type=Invoice, deps_type=Db)

text: str = Runner(typed).run("hi").output  # E: [assignment] (expression has type "Invoice", variable has type "str")
Runner(typed).run("hi", deps=Db("db"))  # E: [call-overload] No overload variant of "run" of "Runner" matches argument types "str", "Db"
Runner(both).run("hi")  # E: [call-arg] Missing named argument "deps" for "run" of "Runner"
Runner(both).run("hi", deps="db")  # E: [arg-type] Argument "deps" to "run" of "Runner" has incompatible type "str"; expected "Db"
