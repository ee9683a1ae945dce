"""The embedding model on ONNX Runtime: the export from the local weights, vectors equal to sentence-transformers',
and the one choice of runtime (ONNX when the export is there, torch otherwise)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from components.embedding.model import EmbeddingModel
from components.embedding.runtime import (
    EXPORT_FILE,
    MANIFEST_FILE,
    clear_stale_staging,
    export_folder,
    export_onnx,
    exportable,
    model_fingerprint,
    onnx_export_ready,
)

TEXTS = [
    "Who maintains the Zorblat library?",
    "   Leading and trailing spaces are stripped as sentence-transformers does.   ",
    "A longer passage about the Quillfeather archive, its vaults and the keepers who index its scrolls. " * 2,
    "word " * 600,  # beyond the 256-token window: truncated the same way
    "Ünïcödé, ligatures (ﬁ) and a lone surrogate \ud800 here",
    "",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, embedding_model) -> tuple[EmbeddingModel, EmbeddingModel]:
    """The torch model with an export root, exported once, and a model of the same name that runs the export."""
    root = tmp_path_factory.mktemp("models")
    torch_model = EmbeddingModel(embedding_model.name, 1, export_root=root)
    assert torch_model.runtime == "torch"
    assert torch_model.export_onnx() == export_folder(root, torch_model.model_path)
    return torch_model, EmbeddingModel(embedding_model.name, 1, export_root=root)


class TestOnnxRuntime:
    def test_onnx_vectors_equal_torch_vectors(self, exported) -> None:
        torch_model, onnx_model = exported
        assert onnx_model.runtime == "onnx"
        assert (onnx_model.dimension, onnx_model.max_tokens) == (torch_model.dimension, torch_model.max_tokens)
        for batch_size in (1, 2, 32):
            expected = torch_model.embed(TEXTS, batch_size=batch_size)
            got = onnx_model.embed(TEXTS, batch_size=batch_size)
            assert got.shape == expected.shape and got.dtype == np.float32
            assert np.abs(got - expected).max() < 1e-5
        assert np.abs(onnx_model.embed_one(TEXTS[0]) - torch_model.embed_one(TEXTS[0])).max() < 1e-5
        assert np.allclose(np.linalg.norm(onnx_model.embed(TEXTS[:3]), axis=1), 1.0, atol=1e-6)

    def test_the_onnx_model_loads_torch_only_for_what_needs_it(self, exported) -> None:
        _, onnx_model = exported
        fresh = EmbeddingModel(onnx_model.name, 1, export_root=onnx_model.export_root)
        assert fresh._st_model is None
        fresh.embed(TEXTS[:2])
        assert fresh._st_model is None
        vectors, _, _ = fresh.embed_with_sentence_spans(TEXTS[:1], [[]])
        assert fresh._st_model is not None
        assert np.abs(vectors - fresh.embed(TEXTS[:1])).max() < 1e-5

    def test_the_onnx_models_tokenizer_is_the_models_without_torch(self, exported) -> None:
        torch_model, onnx_model = exported
        fresh = EmbeddingModel(onnx_model.name, 1, export_root=onnx_model.export_root)
        text = "The Zorblat library parses star charts, written by Mirela Quandt."
        assert fresh.count_tokens(text) == torch_model.count_tokens(text)
        encoded = fresh.tokenizer(text, return_offsets_mapping=True)
        assert encoded == torch_model.tokenizer(text, return_offsets_mapping=True)
        assert fresh.tokenizer.model_max_length == torch_model.tokenizer.model_max_length
        assert fresh._st_model is None

    def test_changed_weights_need_a_new_export(self, exported, tmp_path) -> None:
        torch_model, _ = exported
        copied = tmp_path / "copied-model"
        shutil.copytree(torch_model.model_path, copied)
        assert not onnx_export_ready(torch_model.export_root, copied)
        before = model_fingerprint(copied)
        (copied / "config.json").write_text((copied / "config.json").read_text() + "\n")
        assert model_fingerprint(copied) != before

    def test_a_model_onnx_cannot_reproduce_stays_on_torch(self, exported, tmp_path) -> None:
        torch_model, _ = exported
        copied = tmp_path / "dense-model"
        shutil.copytree(torch_model.model_path, copied)
        modules = json.loads((copied / "modules.json").read_text())
        modules.append({"idx": 9, "name": "9", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
        (copied / "modules.json").write_text(json.dumps(modules))
        assert exportable(torch_model.model_path)
        assert not exportable(copied)
        assert export_onnx(torch_model._model[0].auto_model, copied, tmp_path / "models", 384, 256) is None
        assert not (tmp_path / "models").exists()

    def test_without_an_export_root_nothing_is_exported(self, embedding_model) -> None:
        model = EmbeddingModel(embedding_model.name, 1)
        assert model.runtime == "torch" and model.export_onnx() is None


def _dead_pid() -> int:
    """The number of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _staging(folder, name: str):  # noqa: ANN001, ANN202
    path = folder.parent / f".{folder.name}-{name}"
    path.mkdir(parents=True)
    (path / EXPORT_FILE).write_bytes(b"half an export")
    return path


class TestABrokenExport:
    @pytest.mark.parametrize(
        ("damaged", "content"),
        [(EXPORT_FILE, b"\x08\x07not a model, cut short"), (MANIFEST_FILE, b'{"dimension": ')],
    )
    def test_a_damaged_export_falls_back_to_torch_with_one_warning_and_is_removed(
        self, exported, tmp_path, caplog, damaged, content
    ) -> None:
        torch_model, onnx_model = exported
        root = tmp_path / "models"
        folder = export_folder(root, torch_model.model_path)
        shutil.copytree(export_folder(onnx_model.export_root, onnx_model.model_path), folder)
        (folder / damaged).write_bytes(content)
        assert onnx_export_ready(root, torch_model.model_path)
        with caplog.at_level(logging.WARNING):
            model = EmbeddingModel(torch_model.name, 1, export_root=root)
        assert model.runtime == "torch"
        warned = [record for record in caplog.records if "ONNX export" in record.getMessage()]
        assert len(warned) == 1 and "embedding with torch" in warned[0].getMessage()
        assert not folder.exists() and not onnx_export_ready(root, torch_model.model_path)
        assert np.abs(model.embed(TEXTS[:2]) - torch_model.embed(TEXTS[:2])).max() < 1e-6
        assert (model.dimension, model.max_tokens) == (torch_model.dimension, torch_model.max_tokens)

    def test_a_loaded_torch_model_embeds_with_its_fresh_export_from_then_on(self, exported, tmp_path) -> None:
        torch_model, onnx_model = exported
        model = EmbeddingModel(torch_model.name, 1, export_root=tmp_path / "models")
        assert model.runtime == "torch"
        assert model.use_onnx_export() == "onnx" and onnx_export_ready(tmp_path / "models", model.model_path)
        # The same vectors as a model loaded on the export, whatever else shares the batch.
        assert np.array_equal(model.embed(TEXTS[:3]), onnx_model.embed(TEXTS[:3]))
        assert np.array_equal(model.embed(TEXTS[:1]), model.embed(TEXTS[:3])[:1])
        vectors, sentences, kept = model.embed_with_sentence_spans([TEXTS[0]], [[(0, 5)]])  # still torch's pass
        assert vectors.shape == (1, model.dimension) and kept == [[(0, 5)]]
        # Without an export root there is nothing to export: torch stays.
        assert EmbeddingModel(torch_model.name, 1).use_onnx_export() == "torch"

    def test_the_next_export_makes_it_anew_and_clears_what_a_killed_export_left(self, exported, tmp_path) -> None:
        torch_model, onnx_model = exported
        root = tmp_path / "models"
        folder = export_folder(root, torch_model.model_path)
        shutil.copytree(export_folder(onnx_model.export_root, onnx_model.model_path), folder)
        (folder / EXPORT_FILE).write_bytes(b"garbage")
        left_over = _staging(folder, f"{_dead_pid()}-abcd1234")
        model = EmbeddingModel(torch_model.name, 1, export_root=root)
        assert model.runtime == "torch"
        assert model.export_onnx() == folder
        assert not left_over.exists()
        assert [path.name for path in root.iterdir()] == [folder.name]
        again = EmbeddingModel(torch_model.name, 1, export_root=root)
        assert again.runtime == "onnx"
        assert np.abs(again.embed(TEXTS[:2]) - torch_model.embed(TEXTS[:2])).max() < 1e-5

    def test_only_staging_folders_of_ended_or_old_exports_are_cleared(self, tmp_path) -> None:
        folder = tmp_path / "models" / "some-model-0123456789abcdef"
        dead = _staging(folder, f"{_dead_pid()}-k2j4h5g6")
        running = _staging(folder, f"{os.getppid()}-p9o8i7u6")  # a process that is running
        own = _staging(folder, f"{os.getpid()}-q1w2e3r4")
        unnamed = _staging(folder, "z9x8c7v6")  # named by an earlier version: the age rule only
        old = _staging(folder, "y1u2i3o4")
        an_hour_ago = time.time() - 2 * 3600
        os.utime(old, (an_hour_ago, an_hour_ago))
        other_model = _staging(tmp_path / "models" / "other-model-fedcba9876543210", f"{_dead_pid()}-a1s2d3f4")
        assert sorted(clear_stale_staging(folder)) == sorted([dead, old])
        assert running.exists() and own.exists() and unnamed.exists() and other_model.exists()
        assert not dead.exists() and not old.exists()


class TestSwitchingToTheExport:
    """`use_onnx_export` on a model already loaded on torch (ingestion's warm-up), which other threads may use."""

    def test_a_failing_export_is_one_warning_never_raised_and_not_tried_again(
        self, exported, tmp_path, caplog, monkeypatch
    ) -> None:
        torch_model, _ = exported
        (tmp_path / "data").write_text("a file where the data folder should be: nothing can be written under it")
        model = EmbeddingModel(torch_model.name, 1, export_root=tmp_path / "data" / "models")
        tried: list[str] = []
        real_export = export_onnx

        def counted(*args, **kwargs):
            tried.append("export")
            return real_export(*args, **kwargs)

        monkeypatch.setattr("components.embedding.model.export_onnx", counted)
        with caplog.at_level(logging.WARNING):
            assert model.use_onnx_export() == "torch"
            assert model.use_onnx_export() == "torch"  # a second ingest in the same process
        assert tried == ["export"]
        warned = [record for record in caplog.records if "ONNX export" in record.getMessage()]
        assert len(warned) == 1 and "embedding with torch" in warned[0].getMessage()
        assert np.abs(model.embed(TEXTS[:2]) - torch_model.embed(TEXTS[:2])).max() < 1e-6

    def test_a_model_whose_first_module_is_no_transformer_stays_on_torch(self, exported, tmp_path) -> None:
        torch_model, _ = exported
        copied = tmp_path / "cls-model"
        shutil.copytree(torch_model.model_path, copied)
        pooling = json.loads((copied / "1_Pooling" / "config.json").read_text())
        pooling.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
        (copied / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
        model = EmbeddingModel(str(copied), 1, export_root=tmp_path / "models")
        model._st_model = [object()]  # as a static-embedding model: its first module has no `auto_model`
        assert model.use_onnx_export() == "torch"
        assert not (tmp_path / "models").exists()

    def test_the_export_waits_for_a_torch_call_in_progress(self, exported, tmp_path, monkeypatch) -> None:
        import threading

        torch_model, _ = exported
        model = EmbeddingModel(torch_model.name, 1, export_root=tmp_path / "models")
        traced: list[bool] = []
        monkeypatch.setattr("components.embedding.model.export_onnx", lambda *args, **kwargs: traced.append(True))
        with model._lock:  # another thread is in the middle of a torch forward pass
            switching = threading.Thread(target=model.use_onnx_export)
            switching.start()
            switching.join(timeout=0.5)
            assert not traced, "the export traced the transformer during another thread's forward pass"
        switching.join(timeout=30)
        assert traced == [True] and model.runtime == "torch"
