"""Every question asked in every mode before the next question, the modes' order turning from
one question to the next: a slow minute on a shared machine weighs on every mode alike, so the
ratios between modes hold (issue 51's protocol: "each question searched in every mode, order
alternating")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tqdm import tqdm

Q = TypeVar("Q")


def each_mode(
    questions: Sequence[Q], modes: Sequence[str], ask: Callable[[Q, str], Any], desc: str
) -> dict[str, list[Any]]:
    """`ask(question, mode)` for every question and mode; each mode's answers in question
    order."""
    answers: dict[str, list[Any]] = {mode: [] for mode in modes}
    for i, question in enumerate(tqdm(questions, desc=desc)):
        turn = i % len(modes)
        for mode in [*modes[turn:], *modes[:turn]]:
            answers[mode].append(ask(question, mode))
    return answers
