"""The README's under-50-lines adapter passes the properties of the operations it maps."""

from example_adapter import ExampleAdapter

from simdist.testing.runner import PASS, SKIP, run


def test_the_example_adapter_passes_what_it_implements_and_skips_the_rest():
    adapter = ExampleAdapter(4)
    outcomes = run(
        adapter, "reduce.*,all_reduce.*,gather.*,loss.*,input.split.auto", max_examples=4
    )
    status = {o.property.id: o.status for o in outcomes}
    assert status["input.split.auto"] == SKIP
    assert all(s == PASS for pid, s in status.items() if pid != "input.split.auto"), status
    assert len([s for s in status.values() if s == PASS]) >= 14


def test_the_example_adapter_is_under_50_lines():
    import example_adapter

    with open(example_adapter.__file__, encoding="utf-8") as f:
        assert len(f.read().splitlines()) < 50
