"""Dates a sentence states (spaCy finds them, dateparser reads them), resolved against the document's date."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from components.graph.dates import FuzzyDate, find_dates, resolve_date, sentence_validity
from components.text.language import parse
from pipelines.evaluation.jsonl import load_jsonl

ANCHOR = dt.date(2019, 2, 14)  # a Thursday
# Labelled sentences: the date each states, stated in full or relative to its document's date.
STATED_DATES = load_jsonl(
    Path(__file__).resolve().parents[2] / "data" / "stated_dates.jsonl",
    required=("sentence", "document_date", "date", "how"),
)


def validity(sentence: str, anchor: dt.date | None = ANCHOR, previous: FuzzyDate | None = None):
    return sentence_validity(parse(sentence)[:], anchor, previous)


def iso(sentence: str, anchor: dt.date | None = ANCHOR, previous: FuzzyDate | None = None) -> str | None:
    valid, _, _, _ = validity(sentence, anchor, previous)
    return valid.iso() if valid else None


class TestFuzzyDate:
    def test_parse_keeps_precision(self):
        assert FuzzyDate.parse("2008").precision == "year"
        assert FuzzyDate.parse("2008-06").iso() == "2008-06"
        assert FuzzyDate.parse("2008-06-09").value == dt.date(2008, 6, 9)
        assert FuzzyDate.parse("2008-06-09T10:00:00").iso() == "2008-06-09"

    @pytest.mark.parametrize("text", ["", "June 2008", "2008-13", "2008-02-30", "08-06-09", "yesterday"])
    def test_parse_rejects_malformed(self, text):
        with pytest.raises(ValueError, match="not an ISO date"):
            FuzzyDate.parse(text)

    def test_end_of_period(self):
        assert FuzzyDate.parse("2008").end == dt.date(2008, 12, 31)
        assert FuzzyDate.parse("2008-02").end == dt.date(2008, 2, 29)

    def test_agreement_to_the_gold_precision(self):
        gold_month = FuzzyDate.parse("2006-03")
        assert FuzzyDate.parse("2006-03-28").agrees_with(gold_month)
        assert not FuzzyDate.parse("2006").agrees_with(gold_month)  # less precise than the gold
        assert not FuzzyDate.parse("2006-04-01").agrees_with(gold_month)


class TestStatedDates:
    @pytest.mark.parametrize("case", STATED_DATES, ids=lambda case: case["sentence"])
    def test_absolute_and_relative_to_the_document_date(self, case):
        assert iso(case["sentence"], dt.date.fromisoformat(case["document_date"])) == case["date"], case["how"]

    def test_relative_to_the_previous_date_in_the_text(self):
        previous = FuzzyDate.parse("1984")
        assert iso("One year later he was fired.", previous=previous) == "1985"
        assert iso("Two years later, it opened a plant.", previous=previous) == "1986"
        assert iso("The following year the system was released.", previous=previous) == "1985"

    def test_a_counted_date_restated_as_a_stated_one_is_the_stated_one(self):
        previous = FuzzyDate.parse("2006-01-15")
        valid, _, method, _ = validity(
            "Fourteen years later, on January 23, 2020, Varnopedia passed a million.", previous=previous
        )
        assert (valid.iso(), method) == ("2020-01-23", "stated")
        assert iso("Two years later, on May 3, 2010, the plant opened.", previous=previous) == "2010-05-03"
        # a bare month takes the year stated right after it, not the document's
        valid, _, method, _ = validity("The following May, in 2022, Quillon Labs raised 40 million dollars.", ANCHOR)
        assert (valid.iso(), method) == ("2022-05", "stated")
        # a month of the sentence's own event and a year it compares with are two dates: the first dates the event
        assert iso("In March, Quillon Labs sold 400 boats, up from 300 in 2017.", ANCHOR) == "2019-03"

    def test_without_a_date_the_document_date(self):
        valid, invalid, method, _ = validity("Nordvik makes aircraft.", ANCHOR)
        assert (valid.iso(), invalid, method) == ("2019-02-14", None, "document")
        assert validity("Nordvik makes aircraft.", None)[0] is None

    def test_a_stated_period_ends(self):
        valid, invalid, method, _ = validity("Dahl led the company from 2012 until 2019.", ANCHOR)
        assert (valid.iso(), invalid.iso(), method) == ("2012", "2019", "stated")
        valid, invalid, _, _ = validity("He served between 2001 and 2004.", ANCHOR)
        assert (valid.iso(), invalid.iso()) == ("2001", "2004")

    def test_a_date_followed_by_a_comment_is_read(self):
        assert iso("The jet will be delivered on November 11, which is three days later than planned.") == "2019-11-11"

    def test_decades_are_not_years(self):
        assert iso("In the late 1980's it added audio, prompting a suit in 1989.") == "1989"

    def test_numbers_that_are_not_years(self):
        assert iso("The company sold 1999 units and 2,005 parts.") == "2019-02-14"
        assert iso("Revenue reached 2010 million dollars.") == "2019-02-14"
        assert [m.date.iso() for m in find_dates(parse("It may rain.")[:], ANCHOR)] == []


class TestResolveDate:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("last March", "2018-03"),
            ("on Tuesday", "2019-02-12"),
            ("early 2007", "2007"),
            ("the end of March 2009", "2009-03"),
            ("three years ago", "2016"),
            ("9 June 2008", "2008-06-09"),
        ],
    )
    def test_precision_is_what_the_text_states(self, text, expected):
        assert resolve_date(text, ANCHOR).iso() == expected

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("at the end of the year", "2019"),
            ("the start of the month", "2019-02"),
            ("by the end of the month", "2019-02"),
        ],
    )
    def test_a_part_of_the_year_or_month_is_the_documents_own_at_that_precision(self, text, expected):
        # "The end of the year" is this year, as "the end of this year" is; TimeML values a part of a period as the
        # period ("later this year" is the year), so no month or day is claimed.
        assert resolve_date(text, ANCHOR).iso() == expected

    # "The year" without a part named is no date of its own.
    @pytest.mark.parametrize(
        "text", ["two weeks", "the 1990s", "recent years", "", "15 a year", "twice per month", "the year"]
    )
    def test_durations_rates_and_vague_times_are_not_dates(self, text):
        assert resolve_date(text, ANCHOR) is None

    def test_steps_count_from_the_previous_date(self):
        assert resolve_date("two years later", ANCHOR, FuzzyDate.parse("2020")).iso() == "2022"
        assert resolve_date("the following month", ANCHOR, FuzzyDate.parse("2020-11")).iso() == "2020-12"
        assert resolve_date("two years later", None, None) is None

    def test_a_day_of_the_coming_weeks_is_the_coming_one(self):
        assert resolve_date("June 24", dt.date(2010, 6, 16)).iso() == "2010-06-24"
        assert resolve_date("January 5", dt.date(2010, 12, 20)).iso() == "2011-01-05"
        assert resolve_date("May 3", dt.date(2010, 6, 16)).iso() == "2010-05-03"  # a past day stays past
        assert resolve_date("December 30", dt.date(2010, 6, 16)).iso() == "2009-12-30"

    def test_next_without_the_counts_from_the_time_of_writing(self):
        earlier = FuzzyDate.parse("1955")
        assert resolve_date("next month", dt.date(2011, 8, 8), earlier).iso() == "2011-09"
        assert resolve_date("next year", dt.date(2005, 6, 6), FuzzyDate.parse("2007")).iso() == "2006"
        assert resolve_date("the next month", dt.date(2011, 8, 8), FuzzyDate.parse("2008-05")).iso() == "2008-06"


class TestPartsOfYearAndAnaphors:
    """A quarter, a half or a season without its year is the year it falls in; "that day", "the year before" count
    from the text's previous date, and name nothing without one."""

    @pytest.mark.parametrize(
        ("text", "anchor", "expected"),
        [
            ("the first quarter", dt.date(2019, 4, 20), "2019"),  # begun by the document's date: this year's
            ("the fourth quarter", dt.date(2019, 2, 14), "2018"),  # not begun yet: last year's
            ("last quarter", dt.date(2019, 2, 14), "2018"),  # the quarter before the document's (October-December)
            ("the previous quarter", dt.date(2019, 8, 2), "2019"),
            ("this quarter", dt.date(2019, 2, 14), "2019"),
            ("Q3", dt.date(2019, 2, 14), "2018"),
            ("the second half of the fiscal year", dt.date(2019, 2, 14), "2019"),
            ("the third quarter of last year", dt.date(2019, 2, 14), "2018"),
            ("the first half", dt.date(2019, 2, 14), "2019"),
            ("last summer", dt.date(2019, 2, 14), "2018"),
            ("this summer", dt.date(2019, 2, 14), "2019"),
            ("the third quarter of 2017", dt.date(2019, 2, 14), "2017"),
        ],
    )
    def test_a_part_of_a_year_is_its_year(self, text, anchor, expected):
        assert resolve_date(text, anchor).iso() == expected

    def test_a_coming_part_of_a_year_when_the_sentence_speaks_of_the_future(self):
        assert resolve_date("the fourth quarter", dt.date(2019, 2, 14), future=True).iso() == "2019"
        assert resolve_date("next summer", dt.date(2019, 8, 14)).iso() == "2020"

    def test_the_time_named_again_counts_from_the_previous_date(self):
        previous = FuzzyDate.parse("2016-05-03")
        assert resolve_date("that day", ANCHOR, previous).iso() == "2016-05-03"
        assert resolve_date("later that year", ANCHOR, previous).iso() == "2016"
        assert resolve_date("the day before", ANCHOR, previous).iso() == "2016-05-02"
        assert resolve_date("the year after", ANCHOR, previous).iso() == "2017"
        # Without an earlier date, "that day" names none ("Unfortunately, that day has come").
        assert resolve_date("that day", ANCHOR) is None and resolve_date("the year before", ANCHOR) is None

    def test_a_possessive_date_is_the_date(self):
        assert resolve_date("Monday's", ANCHOR).iso() == "2019-02-11"
        assert resolve_date("last year's", ANCHOR).iso() == "2018"

    def test_this_weekday_is_the_day_of_the_document_s_week(self):
        assert resolve_date("this Monday", ANCHOR).iso() == "2019-02-11"  # ANCHOR is a Thursday
        assert resolve_date("this Saturday", ANCHOR).iso() == "2019-02-16"


class TestTheDateSClauseTellsTheFuture:
    """A bare weekday turns forward only when its own clause tells what will happen."""

    def dates(self, sentence: str) -> list[str]:
        return [m.date.iso() for m in find_dates(parse(sentence)[:], ANCHOR)]  # ANCHOR is a Thursday

    def test_a_future_in_another_clause_keeps_the_day_past(self):
        assert self.dates("Quillon, which will open a plant in Oslo, said on Monday that sales rose.") == ["2019-02-11"]

    def test_the_date_s_own_clause_in_the_future_turns_it_forward(self):
        assert self.dates("Talmont will announce its results on Monday.") == ["2019-02-18"]
        assert self.dates("Quillon said it would resume flights on Saturday.") == ["2019-02-16"]
        assert self.dates("Quillon plans to resume flights on Saturday.") == ["2019-02-16"]
        assert self.dates("Quillon is expected to open the plant on Friday.") == ["2019-02-15"]

    def test_a_past_verb_of_its_own_keeps_the_day_past(self):
        # The date dates the expecting itself, and a verb in the past joined to a future one has its own tense; a
        # planning verb the date belongs to in the passive still tells what will happen.
        expected = {
            "On Monday, Quillon expected sales to fall.": "2019-02-11",
            "Quillon plans to cut 200 jobs and said on Monday that sales fell.": "2019-02-11",
            "Quillon will close its plant in Oslo and opened a new one on Monday.": "2019-02-11",
            "The decision is expected on Monday.": "2019-02-18",
            "The launch is scheduled for Friday.": "2019-02-15",
        }
        assert {sentence: self.dates(sentence) for sentence in expected} == {s: [d] for s, d in expected.items()}

    def test_this_weekday_in_a_clause_of_the_future_is_the_coming_one(self):
        assert self.dates("Talmont will report its results this Monday.") == ["2019-02-18"]
        assert self.dates("Talmont reported its results this Monday.") == ["2019-02-11"]

    def test_a_contracted_or_negated_future_turns_it_forward(self):
        assert self.dates("Quillon won't open the plant on Friday.") == ["2019-02-15"]
        assert self.dates("They’ll open the plant on Friday.") == ["2019-02-15"]


class TestAPartOfTheYearNamedAgain:
    """ "that summer", "that quarter" name the text's time again: the year of its previous date, none without one."""

    def test_that_season_is_the_previous_date_s_year(self):
        # The recogniser leaves "that" out of the date ("summer"): the word before it still says which summer.
        previous = FuzzyDate.parse("2016-05-03")
        found = find_dates(parse("Talmont opened a plant that summer.")[:], ANCHOR, previous)
        assert [m.date.iso() for m in found] == ["2016"]
        assert resolve_date("later that summer", ANCHOR, previous).iso() == "2016"

    def test_that_opening_a_clause_is_not_the_season_s(self):
        # "said that fourth-quarter sales rose": "that" opens the clause, the quarter is the document's last.
        assert [m.date.iso() for m in find_dates(parse("Quillon said that fourth-quarter sales rose.")[:], ANCHOR)] == [
            "2018"
        ]

    def test_without_an_earlier_date_it_names_none(self):
        assert find_dates(parse("Talmont opened a plant that summer.")[:], ANCHOR) == []
        assert resolve_date("that summer", ANCHOR) is None and resolve_date("that quarter", ANCHOR) is None


class TestAStepBackFromALessPreciseDate:
    """A step back smaller than the previous date's period stays in that period ("founded in 2016. The day
    before, ..." is 2016, not 2015)."""

    def test_the_step_back_keeps_the_period(self):
        def step(text: str, previous: str) -> str:
            return resolve_date(text, ANCHOR, FuzzyDate.parse(previous)).iso()

        assert step("the day before", "2016") == step("the previous day", "2016") == "2016"
        assert step("a day earlier", "2016") == step("the day after", "2016") == "2016"
        assert step("the week before", "2016-05") == "2016-05" and step("the month before", "2016-05") == "2016-04"
        assert step("the day before", "2016-05-03") == "2016-05-02" and step("two years earlier", "2016-05") == "2014"


class TestAnEarlierDateOfTheSameSentence:
    """A time named again or a step counts from the date the same sentence stated before it."""

    def test_it_counts_from_the_sentence_s_own_date(self):
        def dates(sentence: str, previous: FuzzyDate | None = None) -> list[str]:
            return [m.date.iso() for m in find_dates(parse(sentence)[:], ANCHOR, previous)]

        assert dates("Talmont was founded in 2001 and two years later moved to Oslo.") == ["2001", "2003"]
        assert dates("Talmont was founded in 2001 and moved to Oslo the year after.", FuzzyDate.parse("2010")) == [
            "2001",
            "2002",
        ]
        assert dates("Talmont opened a plant in March 2016 and closed it that summer.") == ["2016-03", "2016"]
