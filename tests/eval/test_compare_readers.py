"""benchmarks/compare_readers.py: per-method ratios of two readers' runs, and whether only the reader differs."""

import json

import yaml

from benchmarks import compare_readers


def _run(path, model, em, threads=2, k=2, max_new_tokens=16):
    """A run made in its own checkout (`path`), so its absolute paths differ from every other run's."""
    path.mkdir(parents=True)
    config = {
        "llm": {"model": model, "threads": threads, "max_new_tokens": max_new_tokens},
        "evidence": {"k": k},
        "paths": {"root": str(path)},
        "corpus": {"source": f"{path}/data/corpus.jsonl", "chunk_size": 400},
        "eval": {
            "dataset": "d",
            "sample": 100,
            "seed": 0,
            "output": f"{path}/results",
            "run_id": path.name,
            "questions": f"{path}/data/dev.jsonl",
            "methods": ["a"],
        },
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config))
    metrics = {"methods": {"a": {"em": em, "f1": em / 2}, "only_here": {"em": 0.5, "f1": 0.5}}}
    (path / "metrics.json").write_text(json.dumps(metrics))
    right = round(em * 10)  # 10 questions, the first `right` answered exactly
    (path / "predictions.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "method": "a", "em": i < right, "f1": float(i < right) / 2}) + "\n" for i in range(10))
    )
    return path


def test_ratios_per_method_and_settings_checked(tmp_path):
    big, small = _run(tmp_path / "big", "qwen", 0.3, threads=1), _run(tmp_path / "small", "gemma", 0.2)
    rows = compare_readers.compare(big, small)
    assert set(rows) == {"a", "only_here"} and rows["a"]["em_ratio"] == 1.5 and rows["a"]["f1_first"] == 0.15
    # The paired difference on the same 10 questions: the bigger reader answers one more, inside the noise.
    assert rows["a"]["diff"]["n"] == 10 and rows["a"]["diff"]["em"] == 0.1
    assert rows["a"]["diff"]["em_ci"][0] <= 0 < rows["a"]["diff"]["em_ci"][1] and rows["a"]["diff"]["em_mcnemar_p"] == 1.0
    assert rows["only_here"]["diff"] == {"n": 0}  # no answers saved for it: no difference claimed
    assert compare_readers.settings(big) == compare_readers.settings(small)  # reader and threads may differ
    other = _run(tmp_path / "other", "gemma", 0.2, k=5)
    assert compare_readers.settings(big) != compare_readers.settings(other)  # retrieval may not
    longer = _run(tmp_path / "longer", "gemma", 0.2, max_new_tokens=64)
    assert compare_readers.settings(big) != compare_readers.settings(longer)  # nor how the reader is asked


def test_a_zero_score_gives_no_ratio(tmp_path):
    rows = compare_readers.compare(_run(tmp_path / "x", "qwen", 0.3), _run(tmp_path / "y", "gemma", 0.0))
    assert rows["a"]["em_ratio"] is None
