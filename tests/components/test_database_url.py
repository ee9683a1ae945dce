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
