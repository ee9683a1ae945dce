"""The name lookup both graph stores share (`rank_entity_matches`), on written candidates."""

from __future__ import annotations

from components.graph.model import Entity
from components.graph.store import rank_entity_matches


def lookup(name: str, entities: list[Entity]) -> list[str]:
    return [entity.name for entity in rank_entity_matches(name, entities, {e.uuid: set(e.aliases) for e in entities})]


BOEING = Entity("1", "Boeing", "organization", [], 60)
BOEING_777 = Entity("2", "777", "product", ["boeing 777"], 5)
USAF = Entity("3", "United States Air Force", "organization", ["usaf"], 20)
UNITED_STATES = Entity("4", "United States", "place", [], 40)
APPLE_CORPS = Entity("5", "Apple Corps", "organization", [], 10)


class TestEntityLookup:
    def test_a_model_name_is_found_by_its_alias_not_its_makers_name(self):
        assert lookup("Boeing 777", [BOEING, BOEING_777])[0] == "777"

    def test_a_model_name_never_falls_back_to_its_makers_name(self):
        assert lookup("Boeing 787", [BOEING, BOEING_777]) == []

    def test_the_longest_name_inside_a_longer_one_still_answers(self):
        assert lookup("Beatles Apple Corps", [APPLE_CORPS, BOEING]) == ["Apple Corps"]

    def test_a_misspelt_name_is_the_name_one_slip_away(self):
        assert lookup("United States Air Froce", [USAF, UNITED_STATES]) == ["United States Air Force"]
        assert lookup("United States Navy", [USAF, UNITED_STATES]) == ["United States"]
