"""Bulk loading of triples (`graphmem load`): read, plan, embed and write in a pipeline."""

from engine.load.read import TRIPLE_FORMATS, Limits, triple_format
from engine.load.run import LoadJob, LoadProgress, LoadReport, load_file

__all__ = [
    "TRIPLE_FORMATS",
    "Limits",
    "LoadJob",
    "LoadProgress",
    "LoadReport",
    "load_file",
    "triple_format",
]
