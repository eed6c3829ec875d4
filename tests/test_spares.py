"""Spare trials (harness.spares): which judged conditions get them, how many, in what order; and what the run's
tables and a verdict's evidence say about them."""

import pandas as pd

from loadlab.experiment import Experiment, trials_text
from loadlab.harness import spares
from loadlab.judgements import evidence

OK = {"status": "ok", "loadgen_saturated": False}
SPOILED = {"status": "ok", "loadgen_saturated": True}
STALLED = {"status": "failed", "failure_reason": "stalled", "loadgen_saturated": True}

CONDITIONS = [
    {"condition": "go@c10", "trials": 3, "shown": False},
    {"condition": "java@c10", "trials": 3, "shown": False},
    {"condition": "node@c10", "trials": 2, "shown": True},
]


def _order(*conditions, spare_from=None):
    return [{"trial": number, "condition": name, "block": None if spare_from and number >= spare_from else 1,
             **({"spare": True} if spare_from and number >= spare_from else {})}
            for number, name in enumerate(conditions, start=1)]


def test_a_spare_for_each_trial_the_loadgen_spoiled_and_none_for_a_server_failure_or_a_shown_condition():
    order = _order("go@c10", "java@c10", "node@c10", "go@c10", "java@c10", "node@c10", "go@c10", "java@c10")
    rows = {1: SPOILED, 2: OK, 3: SPOILED, 4: SPOILED, 5: STALLED, 6: SPOILED, 7: OK, 8: OK}
    assert spares.spares_due(CONDITIONS, order, rows, most=3) == {"go@c10": 2}
    assert spares.spares_due(CONDITIONS, order, rows, most=1) == {"go@c10": 1}
    assert spares.spares_due(CONDITIONS, order, rows, most=0) == {}


def test_nothing_is_due_before_the_schedule_has_finished():
    order = _order("go@c10", "java@c10", "go@c10")
    assert spares.spares_due(CONDITIONS, order, {1: SPOILED, 2: OK}, most=2) == {}


def test_spares_count_against_the_most_a_condition_may_have_and_a_spoiled_spare_is_made_up_in_turn():
    order = _order("go@c10", "go@c10", "go@c10", "java@c10", "java@c10", "java@c10", "go@c10", "go@c10",
                   spare_from=7)
    rows = {1: SPOILED, 2: SPOILED, 3: OK, 4: OK, 5: OK, 6: OK, 7: SPOILED, 8: OK}
    # go: 2 of 5 kept, 2 spares had; one more allowed by most=3, and it is due.
    assert spares.spares_due(CONDITIONS[:2], order, rows, most=3) == {"go@c10": 1}
    assert spares.spares_due(CONDITIONS[:2], order, rows, most=2) == {}
    rows[7] = OK
    assert spares.spares_due(CONDITIONS[:2], order, rows, most=3) == {}


def test_spares_are_numbered_after_the_last_trial_interleaved_round_by_round_and_seeded():
    order = _order("go@c10", "java@c10")
    added = spares.schedule_spares(order, {"go@c10": 2, "java@c10": 1}, seed=5)
    assert [entry["trial"] for entry in added] == [3, 4, 5]
    assert all(entry["spare"] is True and entry["block"] is None for entry in added)
    assert sorted(entry["condition"] for entry in added[:2]) == ["go@c10", "java@c10"]  # one each first
    assert added[2]["condition"] == "go@c10"
    assert added == spares.schedule_spares(order, {"go@c10": 2, "java@c10": 1}, seed=5)
    assert spares.spares_text({"go@c10": 2, "java@c10": 1}) == \
        "3 spare trials (go@c10 ×2, java@c10 ×1), for trials the loadgen spoiled"


def test_an_experiment_takes_spare_trials_from_its_file_and_rejects_a_negative_count():
    document = {"name": "spared", "servers": [{"server": "go-nethttp"}], "spare_trials": 2}
    assert Experiment.from_dict(document).spare_trials == 2
    assert Experiment.from_dict({**document, "spare_trials": 0}).spare_trials == 0
    try:
        Experiment.from_dict({**document, "spare_trials": -1})
    except Exception as error:
        assert "spare_trials" in str(error)
    else:
        raise AssertionError("a negative spare_trials was accepted")


def test_the_pages_say_how_many_spares_a_judged_condition_may_have():
    parameters = {"trials_per_condition": 6, "shown_trials": 3, "spare_trials": 2,
                  "servers": [{"shown": True}], "load": {}}
    assert trials_text(parameters) == ("6 trials per judged condition, 3 per shown one; up to 2 spares a judged "
                                       "condition for trials its loadgen spoiled, run after the blocks")
    assert trials_text(parameters, short=True) == "6 per judged condition, 3 per shown one, up to 2 spares a judged condition"
    assert trials_text({**parameters, "spare_trials": 0}, short=True) == "6 per judged condition, 3 per shown one"


def test_a_verdicts_evidence_counts_the_spares_it_used_and_the_trials_they_replaced():
    trials = pd.DataFrame([
        {"trial": 1, "label": "go", "status": "ok", "loadgen_saturated": True, "spare": False, "rss": 1.0},
        {"trial": 2, "label": "go", "status": "ok", "loadgen_saturated": False, "spare": False, "rss": 2.0},
        {"trial": 3, "label": "java", "status": "ok", "loadgen_saturated": False, "spare": False, "rss": 3.0},
        {"trial": 4, "label": "go", "status": "ok", "loadgen_saturated": False, "spare": True, "rss": 4.0},
    ])
    gathered = evidence.gather(trials, ["go", "java"], "rss")
    assert gathered.spare_ids == {"go": [4]} and gathered.n_spares() == 1
    assert gathered.summary(["go", "java"]) == \
        "2 + 1 trials used (1 of them spare, run after the blocks); left out: 1 loadgen saturated"
    no_column = evidence.gather(trials.drop(columns="spare"), ["go", "java"], "rss")
    assert no_column.n_spares() == 0 and no_column.summary(["go", "java"]) == "2 + 1 trials used; left out: 1 loadgen saturated"
