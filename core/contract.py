"""The strategy contract: what a retrieval strategy declares (parameters, needs) and what its build receives.

It lives in ``core``, below every strategy, because strategies must declare themselves without importing ``lab``
(which imports them). ``lab.registry`` lists the strategies; nothing else needs to change to add one.

A strategy declares its parameters once, as the fields of a frozen settings dataclass made with ``setting``:
``params_of`` turns those fields into the ``Param``s the CLI, app and report show, and the retriever reads the
same typed object (``settings_with``), never a dict by string keys.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Generic, TypeVar

from llm import Backend, Embedder, Settings

from .storage import Storage
from .types import Case, Progress, Retriever

T = TypeVar("T")
Value = bool | int | float | str

# Where the knowledge graph's triples come from: the case's triples.json, OpenIE by the chat model, or spaCy's parse
# (no LLM; kg/nlp.py). "auto": the file when there is one, else nlp for a large case or when no chat model runs.
# "+nlp": the file's or the LLM's facts plus the deterministic layer (identity facts, and the names and values of a
# sentence joined), for what an LLM's triples leave out (codes, plates, times, aliases).
TRIPLE_SOURCES = ("auto", "precomputed", "llm", "nlp", "precomputed+nlp", "llm+nlp")


@dataclass(frozen=True)
class Param:
    """One tunable of a strategy. ``build_time`` parameters change the index; the others only the query."""
    name: str
    default: Value
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    build_time: bool = False
    step: float | None = None      # a sensible increment for sliders
    llm_step: bool = False         # a switch for an optional LLM call (benchmarks turn these off or on together)

    @property
    def kind(self) -> type:
        return type(self.default)

    def parse(self, raw: str, owner: str = "") -> Value:
        """A value from command-line text ("0.6", "true", "sparse"), checked."""
        text = raw.strip()
        try:
            if self.kind is bool:
                lowered = text.lower()
                if lowered not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError
                value: Value = lowered in ("1", "true", "yes", "on")
            elif self.kind is int:
                value = int(text)
            elif self.kind is float:
                value = float(text)
            else:
                value = text
        except ValueError:
            raise ValueError(f"{self._label(owner)}: {raw!r} is not a valid {self.kind.__name__}") from None
        return self.check(value, owner)

    def check(self, value: object, owner: str = "") -> Value:
        """The value if it has the right type and lies within the bounds; else ValueError naming the parameter."""
        kind = self.kind
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not kind:
            raise ValueError(f"{self._label(owner)} must be a {kind.__name__}, not {value!r}")
        if kind is float and not math.isfinite(value):  # type: ignore[arg-type]
            raise ValueError(f"{self._label(owner)} must be a finite number, not {value!r}")
        if self.minimum is not None and value < self.minimum:  # type: ignore[operator]
            raise ValueError(f"{self._label(owner)} must be at least {self.minimum}, not {value!r}")
        if self.maximum is not None and value > self.maximum:  # type: ignore[operator]
            raise ValueError(f"{self._label(owner)} must be at most {self.maximum}, not {value!r}")
        if self.choices and value not in self.choices:
            raise ValueError(f"{self._label(owner)} must be one of {', '.join(self.choices)}, not {value!r}")
        return value  # type: ignore[return-value]

    def _label(self, owner: str) -> str:
        return f"{owner}.{self.name}" if owner else self.name


def setting(default: Value, help: str, **options: Any) -> Any:
    """A field of a strategy's settings dataclass that is also one of its ``Param``s (options: Param's fields)."""
    return field(default=default, metadata={"param": {"help": help, **options}})


def params_of(settings: object, exclude: Iterable[str] = ()) -> tuple[Param, ...]:
    """The ``Param``s a settings dataclass declares with ``setting``, in field order; given an instance rather than
    the class, its values are the defaults (two strategies sharing one settings type may default differently)."""
    skip = set(exclude)
    default = (lambda f: f.default) if isinstance(settings, type) else (lambda f: getattr(settings, f.name))
    return tuple(Param(f.name, default(f), **f.metadata["param"]) for f in fields(settings)  # type: ignore[arg-type]
                 if "param" in f.metadata and f.name not in skip)


S = TypeVar("S")


def settings_with(settings: S, values: Mapping[str, object] | None) -> S:
    """``settings`` with the query-time values a run passes (already checked against the Params) applied."""
    return dataclasses.replace(settings, **values) if values else settings  # type: ignore[type-var]


@dataclass(frozen=True)
class BuildFailure:
    item: str      # e.g. a passage id
    stage: str
    error: str
    raw: str = ""  # the unreadable model output, kept for inspection


@dataclass
class BuildReport:
    """What one build step did (an index, a shared product, a strategy), rendered by one formatter."""
    name: str
    elapsed_ms: float
    reused: bool = False                                   # loaded from disk or already up to date
    counts: dict[str, int] = field(default_factory=dict)   # e.g. {"embedded": 10, "entities": 38}
    details: dict[str, str] = field(default_factory=dict)  # e.g. {"triples": "precomputed"}
    failures: list[BuildFailure] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, eq=False)
class Product(Generic[T]):
    """Work several strategies share (the knowledge graph): made once per build, passed to whoever asks."""
    name: str
    make: Callable[[BuildContext], T]
    # The progress stages ``make`` may report, with their totals as known before it starts (0: known later),
    # so a progress view can list every stage from the start.
    plan: Callable[[BuildContext], tuple[tuple[str, int], ...]] = lambda ctx: ()


@dataclass
class BuildContext:
    """What a strategy may use to build its index. ``backend`` is None when no chat model is available."""
    case: Case
    settings: Settings
    storage: Storage
    embedder: Embedder
    backend: Backend | None = None
    triples: str = "auto"                 # one of TRIPLE_SOURCES
    workers: int = 2
    progress: Progress | None = None
    reports: list[BuildReport] = field(default_factory=list)
    _products: dict[Product, object] = field(default_factory=dict)

    def shared(self, product: Product[T]) -> T:
        """The product, made on first request and reused by every later strategy of this build."""
        if product not in self._products:
            self._products[product] = product.make(self)
        return self._products[product]  # type: ignore[return-value]

    def plan(self, products: Sequence[Product]) -> list[tuple[str, int]]:
        """The progress stages making ``products`` will report, in order, each once."""
        stages: dict[str, int] = {}
        for product in products:
            if product not in self._products:
                for stage, total in product.plan(self):
                    stages.setdefault(stage, total)
        return list(stages.items())

    def built(self, product: Product[T]) -> T | None:
        """The product if this build made it, else None (nothing is made)."""
        return self._products.get(product)  # type: ignore[return-value]


@dataclass(frozen=True)
class Strategy:
    """A retrieval strategy: one module defines it, one registry line lists it."""
    name: str
    label: str
    description: str
    build: Callable[[BuildContext, Mapping[str, Value]], Retriever]   # receives the build-time parameters
    params: tuple[Param, ...] = ()
    needs_llm: bool = False      # needs a chat model to build or to query (beyond embeddings)
    uses_triples: bool = False   # builds on the shared knowledge graph (triples from the case file or OpenIE)
    # The shared products its build asks for: a tuple, or a function of the build-time parameters.
    products: tuple[Product, ...] | Callable[[Mapping[str, Value]], tuple[Product, ...]] = ()
    # LLM calls a question costs at most beyond its optional LLM steps (each llm_step parameter on is one call):
    # a function of the parameter values and the top k (None: any k), e.g. a loop's reads.
    extra_llm_calls: Callable[[Mapping[str, Value], int | None], int] = lambda values, top_k: 0

    def uses(self, build_params: Mapping[str, Value]) -> tuple[Product, ...]:
        """The shared products a build with these build-time parameters asks for."""
        return self.products(build_params) if callable(self.products) else self.products

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise KeyError(f"strategy {self.name!r} has no parameter {name!r} (its parameters: {known})")

    def values(self, overrides: Mapping[str, object] | None = None) -> dict[str, Value]:
        """Every parameter's value: the defaults with ``overrides`` applied, each checked."""
        out = {p.name: p.default for p in self.params}
        for name, value in (overrides or {}).items():
            out[name] = self.param(name).check(value, self.name)
        return out

    def llm_calls(self, values: Mapping[str, Value], top_k: int | None = None) -> int:
        """The most LLM calls one question costs this strategy at query time with these parameter values, at
        ``top_k`` (None: at any top k)."""
        return sum(1 for p in self.params if p.llm_step and values.get(p.name) is True) + \
            self.extra_llm_calls(values, top_k)

    def llm_switches(self, on: bool) -> dict[str, Value]:
        """Overrides that turn every optional LLM step of this strategy on or off."""
        return {p.name: on for p in self.params if p.llm_step}

    def split(self, values: Mapping[str, Value]) -> tuple[dict[str, Value], dict[str, Value]]:
        """(build-time, query-time) parameters."""
        build = {p.name: values[p.name] for p in self.params if p.build_time}
        query = {p.name: values[p.name] for p in self.params if not p.build_time}
        return build, query
