"""S1's per-connection quantities on S1's own load: the connections held are the kernel's established count,
and under a connection per request the share held is the server's speed, not a level missed."""

import pandas as pd

from loadlab.judgements import s1
from loadlab.units import MIB


def _trials(mode: str) -> pd.DataFrame:
    # go holds few of its connections under a connection per request (fast answers), java nearly all (queued).
    rows = []
    for label, held_low, held_top, rss_low, rss_top in (("go", 0.5, 6405, 11, 252), ("java-platform", 10, 4334, 441, 1231)):
        for trial, (level, held, rss) in enumerate(((10, held_low, rss_low), (10000, held_top, rss_top))):
            rows.append({"label": label, "level": level, "status": "ok", "loadgen_saturated": False,
                         "connection_mode": mode, "connections_accepted": 30000.0,
                         "connections_established_median": held, "process_rss_mean_bytes": rss * MIB,
                         "memory_peak_bytes": rss * MIB, "memory_mean_bytes": rss * MIB * 0.6,
                         "process_rss_shmem_mean_bytes": (0 if label == "go" else 0.9 * rss) * MIB, "trial": trial})
    return pd.DataFrame(rows)


def test_held_is_the_established_count_not_the_connections_accepted():
    trials = _trials("per-request")
    held = s1.connections_held(trials, 10)
    assert list(held) == [0.5, 6405, 10, 4334]
    # Where the run read the accept queue too, held is what the server accepted: established less queued.
    accepted = trials.assign(connections_held_median=[0.5, 2200, 3, 700])
    assert list(s1.connections_held(accepted, 10)) == [0.5, 2200, 3, 700]


def test_under_a_connection_per_request_no_trial_is_excluded_for_the_share_it_held():
    trials = _trials("per-request")
    assert s1.level_shortfall(trials, 10).isna().all()
    keep_alive = s1.level_shortfall(_trials("keep-alive"), 10)
    assert keep_alive[1].startswith(s1.LEVEL_NOT_HELD) and keep_alive[1].endswith("(go held 6,405 of 10,000)")
    assert keep_alive[2] is None  # java held 10 of 10


def test_memory_per_connection_is_process_rss_per_connection_held_with_the_cgroup_beside_it():
    trials = _trials("per-request")
    column, name = s1.memory_quantity(trials)
    assert column == "process_rss_mib" and "process RSS" in name
    data = s1.with_memory_columns(trials)
    per = 1024 * s1.per_connection(data, "process_rss_mib", 10, 10000)
    assert per[1] == (252 - 11) * 1024 / (6405 - 0.5)
    assert per[3] == (1231 - 441) * 1024 / (4334 - 10)
    # The table the page shows is the same figure, with the held count and the cgroup's figure beside it.
    table = s1.per_connection_columns(trials, 10, 10000)
    assert table["rss_per_connection_kib"][1] == per[1] and list(table["held"]) == [0.5, 6405, 10, 4334]
    text = s1.memory_beside_text(data, ("go", "java-platform"), 10, 10000)
    assert "cgroup's memory in use per extra connection" in text and "RssShmem" in text
    assert "java-platform 1,108 MiB" in text  # 0.9 x 1,231
    # A run that did not record process RSS is judged on the cgroup's peak and says so.
    assert s1.memory_quantity(trials.drop(columns="process_rss_mean_bytes"))[0] == "memory_peak_mib"


def test_a_figure_places_each_server_at_the_connections_it_held_not_those_asked():
    # 01's memory figure: java-platform held 4,334 of 10,000 asked, so its trials sit at 4,334 (the median of its
    # trials at that level), not at 10,000.
    trials = pd.concat([_trials("per-request"), _trials("per-request").assign(
        trial=lambda t: t["trial"] + 2, connections_established_median=[1.5, 6000, 12, 4000])], ignore_index=True)
    held = s1.held_at_level(trials, 10)
    top = trials.assign(held=held)[trials["level"] == 10000].groupby("label")["held"].unique()
    assert list(top["go"]) == [6202.5] and list(top["java-platform"]) == [4167.0]


def test_the_memory_figures_finding_names_the_connections_each_server_held():
    text = s1.held_memory_finding(_trials("per-request").assign(process_rss_mib=lambda t: t["process_rss_mean_bytes"] / MIB),
                                  "process_rss_mib", 10)
    assert text == "At 10,000 connections asked: java-platform used 1,231 MiB holding 4,334; go used 252 MiB holding 6,405."
