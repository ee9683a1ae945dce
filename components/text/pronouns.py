"""The pronouns that refer back to a person and to a thing, shared by graph extraction and follow-up questions."""

from __future__ import annotations

# A person: "Dahl said he ...".
PERSON_PRONOUNS = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})
# A thing: an organisation, a product, a place ("Nordvik said its ...").
THING_PRONOUNS = frozenset({"it", "its", "itself"})
