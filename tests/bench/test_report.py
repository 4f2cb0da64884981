"""bench/_report.py: the parts of a results page that another script owns."""

from bench._report import blocks, keep_blocks, put_block

PAGE = "# Results\n\nIntro.\n\n## Comparison\n\n| a |\n"


def test_put_block_appends_then_replaces_and_keeps_the_rest():
    once = put_block(PAGE, "bench/trees.py", "## Trees\n\nfirst")
    assert once.startswith(PAGE.rstrip("\n"))
    assert blocks(once) == {"bench/trees.py": "## Trees\n\nfirst"}
    twice = put_block(once, "bench/trees.py", "## Trees\n\nsecond\n")
    assert twice.count("<!-- bench/trees.py: begin -->") == 1
    assert blocks(twice) == {"bench/trees.py": "## Trees\n\nsecond"}
    assert twice.replace("second", "first") == once
    assert put_block("", "x", "body") == "<!-- x: begin -->\nbody\n<!-- x: end -->\n"


def test_keep_blocks_carries_other_scripts_parts_into_a_new_page():
    old = put_block(put_block("old page\n", "bench/trees.py", "trees"), "other.py", "other")
    new = keep_blocks("# New page\n", old)
    assert new.startswith("# New page\n")
    assert "old page" not in new
    assert blocks(new) == {"bench/trees.py": "trees", "other.py": "other"}
    assert keep_blocks("# New page\n", "no blocks here") == "# New page\n"
