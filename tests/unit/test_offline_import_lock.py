"""The offline extractor's first imports of spaCy happen under its load lock: threads of one
ingest (concurrency 4) that read their first messages while another loads the pipeline
raced Python's import locks, and a message failed with `_DeadlockError: deadlock detected by
_ModuleLock('spacy.lang')` (seen in a README run of `graphmem ingest`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from engine.extraction.offline.extractor import OfflineExtractor

# in a fresh interpreter: with the load lock held, the first look at a message's language
# must wait for it (an import beside a load is what deadlocked)
SCRIPT = textwrap.dedent(
    """
    import sys, threading
    import spacy  # the slow part, so the wait below is the lock's alone
    from engine.extraction.offline import extractor
    assert "spacy.lang.en.stop_words" not in sys.modules
    done = threading.Event()
    text = "I moved to Lisbon last spring and I love the tiles there."
    reader = threading.Thread(target=lambda: (extractor._looks_english(text), done.set()))
    with extractor._LOAD_LOCK:
        reader.start()
        waited = not done.wait(1.0)
    reader.join(30)
    print(waited, done.is_set())
    """
)


@pytest.mark.skipif(not OfflineExtractor.available(), reason="needs spaCy")
def test_the_first_stop_word_import_waits_for_the_pipeline_load() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True"]
