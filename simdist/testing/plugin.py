"""A pytest plugin: run tests (and the conformance catalogue) against a chosen implementation.

Options: ``--simdist-impl=NAME`` (an adapter name, see ``simdist.testing.adapters``; default
``simdist``), ``--simdist-replicas=N`` (default 4), ``--simdist-max-examples=N``
(default 25, for ``conformance_property`` tests).

Fixtures, in the spirit of TF's strategy combinations:

* ``adapter`` (session): the implementation's :class:`~simdist.testing.adapters.Adapter`;
* ``strategy``: the implementation's strategy object, one test per name in
  ``adapter.strategy_names()`` (``mirrored``, ``one_device``...), over ``--simdist-replicas``
  replicas;
* ``conformance_property``: one test per catalogue property (``--simdist-properties`` globs);
  ``run_conformance(conformance_property)`` runs it and fails the test on a violation.

Example::

    def test_sum(strategy, adapter):
        with strategy.scope():
            ...

    def test_catalogue(conformance_property, run_conformance):
        run_conformance(conformance_property)

A test module that defines its own ``strategy`` fixture keeps it: the plugin parametrizes
only tests that use the plugin's fixture.
"""

from __future__ import annotations

import pytest

from simdist.testing.adapters import load_adapter

_ADAPTER_KEY = pytest.StashKey[object]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("simdist", "simdist conformance")
    group.addoption(
        "--simdist-impl",
        default="simdist",
        help="implementation under test: simdist, reference, tensorflow, an "
        "entry point of group simdist.adapters, or package.module:Factory",
    )
    group.addoption(
        "--simdist-replicas",
        type=int,
        default=4,
        help="replicas of the strategy fixture / most replicas of a property",
    )
    group.addoption(
        "--simdist-workers",
        type=int,
        default=None,
        help="the most workers of a multi-worker property (default: the adapter's)",
    )
    group.addoption(
        "--simdist-properties",
        default=None,
        help="comma-separated property id globs for conformance_property",
    )
    group.addoption(
        "--simdist-max-examples",
        type=int,
        default=25,
        help="hypothesis examples per conformance property",
    )


def _adapter(config: pytest.Config):
    if _ADAPTER_KEY not in config.stash:
        adapter = load_adapter(
            config.getoption("simdist_impl"), config.getoption("simdist_replicas")
        )
        if config.getoption("simdist_workers") is not None:
            adapter.set_workers(config.getoption("simdist_workers"))
        config.stash[_ADAPTER_KEY] = adapter
    return config.stash[_ADAPTER_KEY]


def _uses_ours(metafunc: pytest.Metafunc, name: str) -> bool:
    """The test takes the plugin's fixture ``name``: not its own fixture of that name, and
    not a direct ``@pytest.mark.parametrize`` of that name."""
    for marker in metafunc.definition.iter_markers("parametrize"):
        argnames = marker.args[0] if marker.args else marker.kwargs.get("argnames", "")
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",")]
        if name in argnames:
            return False
    definitions = metafunc._arg2fixturedefs.get(name) or ()
    return bool(definitions) and getattr(definitions[-1].func, "__module__", "") == __name__


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "strategy" in metafunc.fixturenames and _uses_ours(metafunc, "strategy"):
        names = _adapter(metafunc.config).strategy_names()
        metafunc.parametrize("strategy", names, indirect=True, ids=names)
    if "conformance_property" in metafunc.fixturenames and _uses_ours(
        metafunc, "conformance_property"
    ):
        from simdist.testing.properties import select

        props = select(metafunc.config.getoption("simdist_properties"))
        metafunc.parametrize(
            "conformance_property", props, indirect=True, ids=[p.id for p in props]
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    adapter = config.stash.get(_ADAPTER_KEY, None)
    if adapter is not None:
        adapter.close()


@pytest.fixture(scope="session")
def adapter(request: pytest.FixtureRequest):
    """The adapter of ``--simdist-impl`` (one per session)."""
    return _adapter(request.config)


@pytest.fixture
def strategy(request: pytest.FixtureRequest, adapter):
    """The implementation's strategy ``request.param`` over ``--simdist-replicas`` replicas."""
    name = getattr(request, "param", "mirrored")
    return adapter.make_strategy(name, adapter.max_replicas)


@pytest.fixture
def conformance_property(request: pytest.FixtureRequest):
    """One catalogue property (parametrized over ``--simdist-properties``)."""
    return request.param


@pytest.fixture
def run_conformance(request: pytest.FixtureRequest, adapter):
    """``run_conformance(prop)``: runs a property; fails (or xfails, skips) the test."""
    from simdist.testing import known_differences
    from simdist.testing.runner import FAIL, PASS, SKIP, run_property

    def run(prop) -> None:
        outcome = run_property(prop, adapter, request.config.getoption("simdist_max_examples"))
        record = known_differences.find(adapter.name, prop.id)
        if outcome.status == SKIP:
            pytest.skip(outcome.message)
        if outcome.status == FAIL and record is not None:
            pytest.xfail(f"known difference: {record.reason}")
        if outcome.status == FAIL:
            pytest.fail(
                f"{prop.id}: {outcome.message}\ncounterexample: {outcome.counterexample_text}",
                pytrace=False,
            )
        assert outcome.status == PASS

    return run
