"""Integration-test setup: `_proc.py` holds assertions, so pytest rewrites them too."""

import pytest

pytest.register_assert_rewrite("tests.integration._proc")
