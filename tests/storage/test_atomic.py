import os

from enrich_rag.storage.atomic import atomic_directory, recover, staging_path


def test_failed_directory_write_keeps_the_old_version(tmp_path):
    target = tmp_path / "index"
    with atomic_directory(target) as tmp:
        (tmp / "v").write_text("1")
    try:
        with atomic_directory(target) as tmp:
            (tmp / "v").write_text("2")
            raise RuntimeError("crash while writing")
    except RuntimeError:
        pass
    assert (target / "v").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["index"]


def test_recover_restores_a_swapped_out_directory_and_clears_leftovers(tmp_path):
    target = tmp_path / "index"
    target.mkdir()
    (target / "v").write_text("old")
    # A kill between the two renames: the old version moved aside, the new one still staged.
    old = staging_path(target, "old")
    os.replace(target, old)
    staged = staging_path(target)
    staged.mkdir()
    (staged / "v").write_text("new")
    actions = recover(target)
    assert (target / "v").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
    assert actions[0].startswith("restored index")
    assert recover(target) == []
