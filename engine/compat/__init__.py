"""Drop-in facades for code written against other memory libraries (`engine.compat.mem0`)."""
