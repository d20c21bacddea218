"""The public LoCoMo release (`data/locomo10.json` of snap-research/locomo; Maharana et al., ACL
2024; CC BY-NC 4.0), read as it is, for `fused-memory eval --locomo locomo10.json`.

A user should not need a conversion script to reproduce docs/results.md: this turns the release's
conversations into the evaluation dataset exactly as the JSONL the results were measured on was
built (a test checks the two agree on the public conversations):

* a memory per dialogue turn, id `<sample_id>:<dia_id>`, text `Speaker: text` (stripped) plus
  ` [image: <caption>]` where the turn shared an image, `event_at` its session's date and time
  ("1:56 pm on 8 May, 2023", read as UTC), session `<sample_id>:S<n>`, the conversation its namespace;
* a query per QA item, id `<sample_id>:q<index>`, its category by name (1 multi-hop, 2 temporal,
  3 open-domain, 4 single-hop, 5 adversarial), asked at the conversation's last session time; its
  gold ids are the evidence turns, where the release writes several in one string ("D8:6; D9:17")
  split, "D:11:26" read as D11:26, and ids of no turn of the conversation dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import FusedMemoryError
from .data import EvalDataError, EvalDataset, EvalMemory, EvalQuery, checked_dataset

__all__ = ["CATEGORIES", "load_locomo"]

#: LoCoMo's category codes, by the names the reports use.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def load_locomo(path: str | Path, conversations: Sequence[str] | None = None) -> EvalDataset:
    """The release at `path` as an evaluation dataset; `conversations`: only these sample ids (in
    the release's order), each of which must be there."""
    path = Path(path)
    try:
        release = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise EvalDataError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalDataError(f"{path}: not a LoCoMo release file (not JSON: {exc})") from None
    if not isinstance(release, list):
        raise EvalDataError(f"{path}: not a LoCoMo release file (a JSON list of conversations, as locomo10.json)")
    ids = [str(c.get("sample_id")) if isinstance(c, dict) else "?" for c in release]
    wanted = list(dict.fromkeys(conversations or ()))
    unknown = [c for c in wanted if c not in ids]
    if unknown:
        raise EvalDataError(f"--conversations {', '.join(unknown)}: not in {path}, which holds {', '.join(ids)}")
    memories: list[EvalMemory] = []
    queries: list[EvalQuery] = []
    for index, entry in enumerate(release):
        if wanted and ids[index] not in wanted:
            continue
        where = f"{path}: entry {index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("conversation"), dict) \
                or not isinstance(entry.get("qa"), list) or not entry.get("sample_id"):
            raise EvalDataError(f"{where}: expected an object with 'sample_id', 'conversation' and 'qa', as in "
                                "locomo10.json")
        try:
            turns, last = _turns(str(entry["sample_id"]), entry["conversation"], where)
            memories.extend(turns)
            queries.extend(_questions(str(entry["sample_id"]), entry["qa"], last, {m.id for m in turns}, where))
        except (KeyError, TypeError, ValueError) as exc:
            raise EvalDataError(f"{where}: not in locomo10.json's shape ({type(exc).__name__}: {exc})") from None
    return checked_dataset(tuple(memories), tuple(queries), path, path)


def _when(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def _turns(cid: str, conversation: dict[str, Any], where: str) -> tuple[list[EvalMemory], datetime | None]:
    sessions = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.fullmatch(key)))
    out: list[EvalMemory] = []
    last: datetime | None = None
    for n in sessions:
        turns = conversation[f"session_{n}"]
        if not turns:
            continue
        at = _when(conversation[f"session_{n}_date_time"])
        last = at if last is None or at > last else last
        for turn in turns:
            caption = turn.get("blip_caption")
            text = f"{turn['speaker']}: {turn['text'].strip()}" + (f" [image: {caption}]" if caption else "")
            memory = EvalMemory(id=f"{cid}:{turn['dia_id']}", conversation_id=cid, text=text,
                                session_id=f"{cid}:S{n}", speaker=str(turn["speaker"]), event_at=at)
            try:
                memory.to_memory()  # the library's own checks, as for a JSONL row
            except FusedMemoryError as exc:
                raise EvalDataError(f"{where}: turn {turn['dia_id']}: {exc}") from None
            out.append(memory)
    return out, last


def _questions(cid: str, qa: list[dict[str, Any]], now: datetime | None, turns: set[str],
               where: str) -> list[EvalQuery]:
    out = []
    for i, item in enumerate(qa):
        gold = [f"{cid}:D{m.group(1)}:{m.group(2)}" for evidence in item.get("evidence") or ()
                for token in re.split(r"[;,\s]+", str(evidence)) if (m := _EVIDENCE.fullmatch(token))]
        out.append(EvalQuery(id=f"{cid}:q{i:03d}", conversation_id=cid, question=str(item["question"]),
                             category=CATEGORIES.get(item.get("category", 0), "uncategorized"),
                             gold_ids=tuple(dict.fromkeys(g for g in gold if g in turns)), now=now))
    return out
