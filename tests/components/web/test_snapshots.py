"""`SnapshotStore` on a real folder."""

from __future__ import annotations

import threading

import pytest

from components.web import SnapshotStore

URL = "https://example.org/page"


class TestSnapshotStore:
    def test_save_and_get(self, work_dir):
        store = SnapshotStore(work_dir)
        snapshot = store.save(URL, "# Title\n\nThe first version.", title="Title", metadata={"language": "en"})
        again = store.get(snapshot.snapshot_id)
        assert again == snapshot
        assert again.contains("The first   version.")
        assert again.contains("Title\n\nThe first version.")
        assert not again.contains("The second version.")
        assert store.get("nothing@2026-01-01T00:00:00Z") is None

    def test_a_changed_page_keeps_both_versions(self, work_dir):
        store = SnapshotStore(work_dir)
        first = store.save(URL, "old text", fetched_at="2026-01-01T10:00:00.000000Z")
        second = store.save(URL, "new text", fetched_at="2026-02-01T10:00:00.000000Z")
        third = store.save(URL, "new text", fetched_at="2026-03-01T10:00:00.000000Z")
        assert [snap.markdown for snap in store.history(URL)] == ["old text", "new text", "new text"]
        assert second.content_hash == third.content_hash != first.content_hash
        assert store.at(URL, "2026-01-15").markdown == "old text"
        assert store.at(URL).fetched_at == third.fetched_at
        assert store.at(URL, "2025-12-31") is None
        # Identical content is stored once.
        assert len(list(next(work_dir.iterdir()).glob("*.md"))) == 2
        assert store.get(first.snapshot_id).contains("old text")

    def test_concurrent_saves_all_land(self, work_dir):
        store = SnapshotStore(work_dir)
        threads = [threading.Thread(target=store.save, args=(URL, f"version {n}")) for n in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(snap.markdown for snap in store.history(URL)) == sorted(f"version {n}" for n in range(20))

    def test_a_url_is_required(self, work_dir):
        with pytest.raises(ValueError, match="URL"):
            SnapshotStore(work_dir).save(" ", "text")
