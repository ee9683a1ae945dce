"""The pronouns that refer back to a person, a thing and a group, shared by graph extraction and follow-up questions."""

from __future__ import annotations

# A person: "Dahl said he ...".
PERSON_PRONOUNS = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})
# A thing: an organisation, a product, a place ("Nordvik said its ...").
THING_PRONOUNS = frozenset({"it", "its", "itself"})
# A group: several people or things, or an organisation as its people ("Nordvik said they ...").
PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs", "themselves"})
