"""`settings_in_force`: what is built inside the block takes the settings it names; outside, the process's."""

from __future__ import annotations

import threading

from components.settings import get_settings, setting_or, settings_in_force


def test_the_block_names_the_settings_and_the_process_keeps_its_own(settings) -> None:  # noqa: ANN001
    chosen = settings.model_copy(update={"tool_timeout_s": settings.tool_timeout_s + 11.0})
    with settings_in_force(chosen) as inside:
        assert inside is chosen and get_settings() is chosen
        assert setting_or(None, "tool_timeout_s") == chosen.tool_timeout_s
        with settings_in_force(None):  # None keeps the settings already in force
            assert get_settings() is chosen
    assert get_settings() is not chosen and get_settings().tool_timeout_s == settings.tool_timeout_s


def test_another_thread_is_not_inside_the_block(settings) -> None:  # noqa: ANN001
    chosen = settings.model_copy(update={"tool_timeout_s": settings.tool_timeout_s + 11.0})
    seen = []
    with settings_in_force(chosen):
        thread = threading.Thread(target=lambda: seen.append(get_settings()))
        thread.start()
        thread.join()
    assert seen[0] is not chosen and seen[0].tool_timeout_s == settings.tool_timeout_s
