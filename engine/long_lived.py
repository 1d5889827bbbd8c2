"""The process's long-lived objects moved out of the garbage collector's view (`gc.freeze`)."""

from __future__ import annotations

import functools
import gc


@functools.cache
def freeze_long_lived(after: str) -> None:
    """Freeze the objects alive now, once per process for each `after` ("setup": imported
    modules, the loaded model, ~100,000 objects; "spacy": the modules and pipeline the offline
    extractor imports on its first use, ~100,000 more). A full collection otherwise walks all of
    them: 40-120 ms, in one search of every ~20 on bench-hub and, once the pipeline is loaded,
    one of every ~80 on LoCoMo; afterwards it walks only newer objects. The garbage of the
    moment is collected first; what is frozen is never collected by the cycle collector (it is
    still freed when its last reference goes), and those objects are long-lived anyway."""
    gc.collect()
    gc.freeze()
