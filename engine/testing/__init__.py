"""Stand-ins for the slow parts, for fast tests, benchmarks and trying graphmem out.

- `HashEmbedder`: an `Embedder` whose vectors come from hashed words; no model loads.
- `ScriptedLLM`: a real OpenAI-compatible HTTP server on 127.0.0.1 answering from a script
  (`ScriptedLLMProcess`: the same in a process of its own, for benchmarks). The reply types
  and ready-made responders are in `engine.testing.scripted_replies`.

Neither starts a store: pair them with a real one (`Memory(store=..., embedder=HashEmbedder())`)
or, in a unit test, with no store at all.
"""

from engine.testing.hash_encoder import HashEmbedder, HashEncoder
from engine.testing.scripted_llm import ScriptedLLM, ScriptedLLMProcess

__all__ = ["HashEmbedder", "HashEncoder", "ScriptedLLM", "ScriptedLLMProcess"]
