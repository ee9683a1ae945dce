"""A configured database that is not PostgreSQL is refused by name before any connection is tried."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from components.database import DatabaseUnavailable, database_url, postgres_url
from components.settings import Settings


@pytest.mark.parametrize(
    "value",
    [
        "postgresql://kb:secret@db.example:5432/kb",
        "postgres://kb@localhost/kb",
        "host=localhost port=5432 dbname=kb",
        "postgresql://kb:wren[gale]@db.example/kb",  # a bare bracket in the password: libpq reads it as it is
        "host=db.example password=a://b dbname=kb",  # a scheme-like text inside a key=value string
    ],
)
def test_postgresql_urls_and_libpq_strings_are_taken_as_they_are(value: str) -> None:
    assert postgres_url(value) == value


@pytest.mark.parametrize("value", ["notaurl", "mysql://kb:secret@db.example/kb", "db.example:5432", "https://kb"])
def test_anything_else_names_the_setting_and_hides_the_value(value: str) -> None:
    with pytest.raises(DatabaseUnavailable, match=r"^DATABASE_URL is not a PostgreSQL URL: ") as refused:
        database_url(Settings(database_url=SecretStr(value)))
    assert value not in str(refused.value) and "secret" not in str(refused.value)


def test_a_password_with_a_bracket_reaches_the_driver_through_the_settings() -> None:
    value = "postgresql://kb:tern]moss@db.example:5432/kb"
    assert database_url(Settings(database_url=SecretStr(value))) == value


@pytest.mark.parametrize(
    ("value", "described"),
    [
        ("postgresql://rhea:wren[gale]@db.quorvane.test:5433/notes", "PostgreSQL at db.quorvane.test:5433/notes"),
        ("postgresql://rhea:tern]moss@db.quorvane.test/notes", "PostgreSQL at db.quorvane.test/notes"),
        ("postgresql://rhea:secret@db.quorvane.test:fivefour/notes", "PostgreSQL at db.quorvane.test:fivefour/notes"),
        ("postgres://rhea:secret@[::1]:5432/notes", "PostgreSQL at [::1]:5432/notes"),
        (
            "postgresql://rhea:secret@one.quorvane.test:5432,two.quorvane.test:5433/notes",
            "PostgreSQL at one.quorvane.test:5432, two.quorvane.test:5433/notes",
        ),
        (
            "host=db.quorvane.test port=5433 dbname=notes user=rhea password=secret",
            "PostgreSQL at db.quorvane.test:5433/notes",
        ),
        ("postgresql:///notes?host=/var/run/postgresql", "PostgreSQL at local socket in /var/run/postgresql/notes"),
        ("postgresql:///notes", "PostgreSQL at local socket/notes"),
    ],
)
def test_status_pages_describe_the_database_without_the_password(value: str, described: str) -> None:
    from components.database import describe_database

    text = describe_database(Settings(database_url=SecretStr(value)))
    assert text == described
    assert "rhea" not in text and "secret" not in text and "wren" not in text and "moss" not in text


@pytest.mark.parametrize(
    ("value", "sentence"),
    [
        ("mysql://rhea:secret@db.quorvane.test/notes", "DATABASE_URL cannot be read: it is not a PostgreSQL URL"),
        (
            "postgresql://rhea:se%zzcret@db.quorvane.test/notes",
            "DATABASE_URL cannot be read as a PostgreSQL connection string",
        ),
        ("host=db.quorvane.test password='secret", "DATABASE_URL cannot be read: it is not a PostgreSQL URL"),
    ],
)
def test_a_database_url_that_cannot_be_read_is_said_so(value: str, sentence: str) -> None:
    from components.database import describe_database

    assert describe_database(Settings(database_url=SecretStr(value))) == sentence
