"""Runtimes have one table of names (`loadlab.servers.RUNTIMES`): folder, figure name and short label.

The palette's aliases are derived from it; the palette's colours, the server folders and the plans' labels are
checked against it here, so a runtime cannot be named one way in a plan and another in a figure.
"""

import inspect

import pytest

from loadlab import plans, servers
from loadlab.experiment import ServerEntry
from loadlab.harness import microbench
from loadlab.plots import palette


def test_the_palette_draws_exactly_the_runtimes_of_the_table_in_its_order():
    names = [runtime.name for runtime in servers.RUNTIMES]
    assert list(palette.RUNTIME_COLOURS) == names
    assert list(palette.RUNTIME_MARKERS) == names


@pytest.mark.parametrize("runtime", servers.RUNTIMES, ids=lambda runtime: runtime.name)
def test_every_runtime_is_served_by_a_server_folder_with_its_settings(runtime):
    spec = servers.get_server(runtime.server)
    for knob, value in runtime.settings:
        spec.check_settings({knob: value})


@pytest.mark.parametrize("runtime", servers.RUNTIMES, ids=lambda runtime: runtime.name)
def test_every_name_of_a_runtime_is_drawn_as_that_runtime(runtime):
    for name in (runtime.name, runtime.label, *runtime.aliases()):
        assert palette.split_runtime(name) == (runtime.name, ""), name
        assert palette.series_style(name) == palette.series_style(runtime.name)


def _plan_entries() -> list[ServerEntry]:
    """Every ServerEntry the plans name: module constants and the servers of each plan at each scale."""
    entries = []
    for value in vars(plans).values():
        candidates = value if isinstance(value, (tuple, list)) else [value]
        entries += [entry for entry in candidates if isinstance(entry, ServerEntry)]
    for name, function in vars(plans).items():
        if name.startswith("_") or not inspect.isfunction(function) or function.__module__ != plans.__name__:
            continue
        parameters = list(inspect.signature(function).parameters.values())
        if [p.name for p in parameters if p.default is inspect.Parameter.empty] == ["scale_name"]:
            for size in plans.SCALE_NAMES:
                result = function(size)  # an Experiment, the list of them (planned_experiments), or images
                for experiment in result if isinstance(result, list) else [result]:
                    entries += list(getattr(experiment, "servers", []))
    return entries


def test_the_plans_label_each_runtime_by_the_table():
    """A plan's label that is a runtime's short label or name runs that runtime's server with its settings."""
    by_name = {name: runtime for runtime in servers.RUNTIMES for name in (runtime.name, runtime.label)}
    entries = _plan_entries()
    assert len(entries) > 20
    wrong = [f"{entry.label}: {entry.server} {entry.settings}" for entry in entries if entry.label in by_name
             and (entry.server != by_name[entry.label].server
                  or not set(by_name[entry.label].settings) <= set(entry.settings.items()))]
    assert wrong == []


def test_the_microbenchmarks_conditions_are_runtime_labels():
    labels = {runtime.label for runtime in servers.RUNTIMES}
    assert set(microbench.CONDITIONS) <= labels
