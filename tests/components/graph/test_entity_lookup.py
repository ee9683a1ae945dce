"""The name lookup both graph stores share (`rank_entity_matches`), on written candidates."""

from __future__ import annotations

from components.graph.model import Entity
from components.graph.store import rank_entity_matches


def lookup(name: str, entities: list[Entity]) -> list[str]:
    return [entity.name for entity in rank_entity_matches(name, entities)]


HALDEN = Entity("1", "Halden", "organization", [], 60)
HALDEN_777 = Entity("2", "777", "product", ["halden 777"], 5)
FOREST_SERVICE = Entity("3", "Royal Forest Service", "organization", ["rfs"], 20)
ROYAL_FOREST = Entity("4", "Royal Forest", "place", [], 40)
QUILLMOOR_RECORDS = Entity("5", "Quillmoor Records", "organization", [], 10)


class TestEntityLookup:
    def test_a_model_name_is_found_by_its_alias_not_its_makers_name(self):
        assert lookup("Halden 777", [HALDEN, HALDEN_777])[0] == "777"

    def test_a_model_name_never_falls_back_to_its_makers_name(self):
        assert lookup("Halden 787", [HALDEN, HALDEN_777]) == []

    def test_the_longest_name_inside_a_longer_one_still_answers(self):
        assert lookup("Saltmarsh Quillmoor Records", [QUILLMOOR_RECORDS, HALDEN]) == ["Quillmoor Records"]

    def test_a_misspelt_name_is_the_name_one_slip_away(self):
        assert lookup("Royal Forest Servcie", [FOREST_SERVICE, ROYAL_FOREST]) == ["Royal Forest Service"]
        assert lookup("Royal Forest Navy", [FOREST_SERVICE, ROYAL_FOREST]) == ["Royal Forest"]
