"""bench/recall.py's data and its per-client, per-class table (issue 45)."""

from collections import Counter
from pathlib import Path

import pytest
import yaml

from bench.recall import CLASSES, Incident, load, table


def test_every_incident_has_a_known_class_and_a_unique_id() -> None:
    incidents = load()
    assert all(incident.class_ in CLASSES for incident in incidents)
    assert len({incident.id for incident in incidents}) == len(incidents)


def test_an_unknown_class_is_refused(tmp_path: Path) -> None:
    row = {
        "id": "x",
        "client": "o/n",
        "fix": "abc",
        "scan": "n",
        "upstream": "trl",
        "class": "imprts",
        "contract": {"module": "trl"},
        "last_good": "1",
        "first_broken": "2",
        "needle": "trl",
    }
    data = tmp_path / "incidents.yaml"
    data.write_text(yaml.safe_dump({"incidents": [row]}))
    with pytest.raises(ValueError, match="x: class 'imprts' not in"):
        load(data)


def _incident(client: str, class_: str) -> Incident:
    return Incident(
        id=f"{client}-{class_}",
        client=client,
        fix="abc",
        scan="n",
        upstream="trl",
        contract={"module": "trl"},
        last_good="1",
        first_broken="2",
        needle="trl",
        class_=class_,
    )


def test_table_counts_per_client_per_class_and_overall() -> None:
    outcomes = [
        (_incident("a/a", "imports"), True),
        (_incident("a/a", "methods"), False),
        (_incident("b/b", "imports"), True),
    ]
    assert table(outcomes).splitlines() == [
        "| client | imports | methods | all |",
        "| --- | --- | --- | --- |",
        "| a/a | 1/1 | 0/1 | 1/2 (50%) |",
        "| b/b | 1/1 | - | 1/1 (100%) |",
        "| **all** | 2/2 | 0/1 | 2/3 (67%) |",
        "| **share** | 2/2 (100%) | 0/1 (0%) | |",
    ]


def test_the_bench_spans_clients_beyond_unsloth() -> None:
    """Issue 45: at least 60 incidents from at least five clients, at most half from unsloth and
    unsloth-zoo."""
    incidents = load()
    clients = Counter(incident.client for incident in incidents)
    unsloth = clients["unslothai/unsloth"] + clients["unslothai/unsloth-zoo"]
    assert len(incidents) >= 60
    assert len(clients) >= 5
    assert 2 * unsloth <= len(incidents)
