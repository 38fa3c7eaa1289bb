"""Generate the bundled demo: every policy answers every question, spread over some days.

Each agent's questions are shuffled (seeded) and grouped into conversations of one to
three turns; conversations are spread evenly over `days` UTC days ending `today`, starting
between 06:00 and 18:00, with turns five minutes apart. Later turns of a conversation carry
the earlier ones as history, as a chat agent's would. The same seed, days and date give
byte-identical files.
"""

from __future__ import annotations

import logging
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from turnscore.demo.policies import POLICIES, plan_turn, questions_for
from turnscore.demo.questions import Question, write_labels
from turnscore.demo.telemetry import AgentTelemetry, Message, TurnSpec

logger = logging.getLogger(__name__)

MODELS = {
    "good": "sim-large-2",
    "wrong_tool": "sim-small-1",
    "hallucinating": "sim-medium-1",
    "lazy": "sim-small-1",
    "overreaching": "sim-large-2",
}
LABELS_FILE = "labels.jsonl"
TRACES_GLOB = "traces-*.jsonl"
_TURN_GAP = timedelta(minutes=5)
_DAY_START = time(6, 0)
_DAY_WINDOW_S = 12 * 3600


@dataclass(frozen=True, slots=True)
class DemoFiles:
    traces: list[Path]
    """OTLP/JSON-lines trace files, one per UTC day, oldest first."""
    labels: Path
    """JSONL labels: one record per question and special request."""


@dataclass(frozen=True, slots=True)
class _Scheduled:
    turn: TurnSpec
    question: Question


def generate_demo(
    out_dir: Path, *, seed: int = 7, days: int = 3, today: date | None = None
) -> DemoFiles:
    """Write the demo's trace files and labels into `out_dir` (created if missing).

    Trace files of an earlier run in `out_dir` (`traces-*.jsonl`) are replaced, so the
    folder always holds exactly one demo.
    """
    if days < 1:
        raise ValueError(f"days must be at least 1, got {days}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(TRACES_GLOB):
        stale.unlink()
    last_day = today or datetime.now(UTC).date()
    schedule = _schedule(random.Random(f"schedule:{seed}"), last_day, days)
    telemetry = AgentTelemetry(out_dir, seed)
    histories: dict[str, list[Message]] = {}
    try:
        for item in schedule:
            plan = plan_turn(item.turn.agent, item.question)
            history = histories.get(item.turn.conversation_id, [])
            histories[item.turn.conversation_id] = telemetry.record_turn(item.turn, plan, history)
    except BaseException:
        telemetry.close(keep=False)
        raise
    traces = telemetry.close()
    labels = write_labels(out_dir / LABELS_FILE)
    logger.info("demo: %d turns in %d trace file(s) under %s", len(schedule), len(traces), out_dir)
    return DemoFiles(traces, labels)


def _schedule(rng: random.Random, last_day: date, days: int) -> list[_Scheduled]:
    first_day = last_day - timedelta(days=days - 1)
    scheduled: list[_Scheduled] = []
    for policy in POLICIES:
        questions = list(questions_for(policy))
        rng.shuffle(questions)
        conversations: list[list[Question]] = []
        while questions:
            size = rng.randint(1, 3)
            conversations.append(questions[:size])
            questions = questions[size:]
        for index, conversation in enumerate(conversations):
            day = first_day + timedelta(days=index * days // len(conversations))
            start = datetime.combine(day, _DAY_START, UTC) + timedelta(
                seconds=rng.randrange(_DAY_WINDOW_S)
            )
            conversation_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            for position, question in enumerate(conversation):
                at = start + position * _TURN_GAP
                turn = TurnSpec(
                    agent=policy,
                    model=MODELS[policy],
                    conversation_id=conversation_id,
                    request=question.input,
                    start_ns=int(at.timestamp()) * 1_000_000_000,
                )
                scheduled.append(_Scheduled(turn, question))
    scheduled.sort(key=lambda item: (item.turn.start_ns, item.turn.agent))
    return scheduled
