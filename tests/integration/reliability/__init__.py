"""Reliability and security suite (issue 8): isolation, injection, LLM faults, concurrency,
crashes and limits, each test reporting the cases it tried and the faults it injected."""
