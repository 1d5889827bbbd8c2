"""What every test gets: an offline model hub and the `scripted_llm` fixture.

The real store and model fixtures are in tests/integration/conftest.py; tests/unit/conftest.py
refuses them (a unit test opens no store and loads no model).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

pytest_plugins = ["tests.conftest_llm", "pytester"]
