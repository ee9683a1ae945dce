import datetime as dt

import pytest

from components.text.dates import input_date, iso_date, parse_date, parse_moment


class TestParseDate:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("2024-05-31", dt.date(2024, 5, 31)),
            ("2024-05-31T23:30:00Z", dt.date(2024, 5, 31)),
            ("31 May 2024", dt.date(2024, 5, 31)),
            ("Fri, 31 May 2024 10:00:00 GMT", dt.date(2024, 5, 31)),
            ("May 2024", dt.date(2024, 5, 1)),
            ("2024", dt.date(2024, 1, 1)),
        ],
    )
    def test_lenient_reads_the_common_forms(self, text, expected):
        assert parse_date(text) == expected

    def test_dates_and_datetimes_pass_through(self):
        assert parse_date(dt.datetime(2024, 5, 31, 10)) == dt.date(2024, 5, 31)
        assert parse_date(dt.date(2024, 5, 31)) == dt.date(2024, 5, 31)

    @pytest.mark.parametrize("value", [None, "", "   "])
    def test_nothing_is_none(self, value):
        assert parse_date(value) is None
        assert parse_date(value, strict=True) is None

    def test_without_a_stated_year_or_a_base_there_is_no_date(self):
        assert parse_date("May 3") is None
        assert parse_date("yesterday") is None
        assert parse_date("not a date at all 1234x") is None

    def test_relative_text_counts_from_the_documents_date(self):
        base = dt.date(2024, 6, 9)
        assert parse_date("yesterday", base=base) == dt.date(2024, 6, 8)
        assert parse_date("May 3", base=base) == dt.date(2024, 5, 3)

    @pytest.mark.parametrize("text", ["31/05/2024", "May 2024", "tomorrow", "2024-13-01"])
    def test_strict_takes_iso_only(self, text):
        with pytest.raises(ValueError, match="is not a date like 2024-05-31"):
            parse_date(text, strict=True)

    def test_strict_takes_an_iso_date_time(self):
        assert parse_date("2024-05-31T10:00:00+02:00", strict=True) == dt.date(2024, 5, 31)


class TestParseMoment:
    def test_a_date_time_is_aware_utc(self):
        assert parse_moment("2024-05-31T10:00:00Z") == dt.datetime(2024, 5, 31, 10, tzinfo=dt.UTC)
        assert parse_moment("2024-05-31T12:00:00+02:00") == dt.datetime(2024, 5, 31, 10, tzinfo=dt.UTC)
        assert parse_moment(dt.datetime(2024, 5, 31, 10)) == dt.datetime(2024, 5, 31, 10, tzinfo=dt.UTC)

    def test_a_bare_day_stays_a_day(self):
        assert parse_moment("2024-05-31") == dt.date(2024, 5, 31)

    def test_malformed_text_is_a_value_error(self):
        with pytest.raises(ValueError, match="is not an ISO date"):
            parse_moment("last week")
        assert parse_moment("") is None


class TestIsoDate:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("2008", (dt.date(2008, 1, 1), "year")),
            ("2008-06", (dt.date(2008, 6, 1), "month")),
            ("2008-06-09", (dt.date(2008, 6, 9), "day")),
            ("2008-06-09T10:00:00", (dt.date(2008, 6, 9), "day")),
        ],
    )
    def test_precision_is_what_the_text_states(self, text, expected):
        assert iso_date(text) == expected

    @pytest.mark.parametrize("text", ["", "08", "2008-13", "2008-02-30", "June 2008"])
    def test_anything_else_is_none(self, text):
        assert iso_date(text) is None


class TestInputDate:
    def test_a_typed_date_is_read_strictly(self):
        assert input_date("2024-05-31", "date_from") == dt.date(2024, 5, 31)
        assert input_date(None, "date_from") is None

    @pytest.mark.parametrize(("value", "shown"), [("31 May 2024", "'31 May 2024'"), (2024, "2024"), ("x" * 80, "'x")])
    def test_a_malformed_date_names_the_parameter_and_the_value(self, value, shown):
        with pytest.raises(ValueError) as raised:
            input_date(value, "date_from")
        assert str(raised.value).startswith(f"date_from must be a date as YYYY-MM-DD, not {shown}")
        assert len(str(raised.value)) < 100  # a long value is cut, not echoed whole

    def test_the_caller_chooses_the_error(self):
        class Refused(Exception):
            pass

        with pytest.raises(Refused, match="^as_of must be a date"):
            input_date("yesterday", "as_of", Refused)
