"""Store methods for flow runs and checkpoints (mixed into :class:`bot.store.Store`).

Checkpoints are append-only: there is an insert and reads, and no update or delete. A run's status
is the only thing that changes after it is written.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from bot.store.models import FlowCheckpoint, FlowRun


class FlowRunsMixin:
    def session(self) -> AbstractContextManager[Session]:  # provided by Store
        raise NotImplementedError

    def create_flow_run(
        self,
        conversation_id: str | None,
        flow: str,
        flow_version: str,
        schedule: list[str],
        *,
        parent_run_id: str | None = None,
        fork_index: int | None = None,
        allow_side_effects: bool = True,
    ) -> FlowRun:
        run = FlowRun(
            id=secrets.token_hex(8),
            conversation_id=conversation_id,
            flow=flow,
            flow_version=flow_version,
            schedule=schedule,
            parent_run_id=parent_run_id,
            fork_index=fork_index,
            allow_side_effects=allow_side_effects,
        )
        with self.session() as s:
            s.add(run)
            s.commit()
        return run

    def get_flow_run(self, run_id: str) -> FlowRun | None:
        with self.session() as s:
            return s.get(FlowRun, run_id)

    def flow_runs(self, conversation_id: str | None = None) -> list[FlowRun]:
        with self.session() as s:
            stmt = select(FlowRun)
            if conversation_id is not None:
                stmt = stmt.where(FlowRun.conversation_id == conversation_id)
            return list(s.exec(stmt.order_by(col(FlowRun.created_at), col(FlowRun.id))))

    def set_flow_run_status(self, run_id: str, status: str) -> None:
        with self.session() as s:
            s.execute(sa.update(FlowRun).where(col(FlowRun.id) == run_id).values(status=status))
            s.commit()

    def add_checkpoint(
        self,
        run_id: str,
        idx: int,
        step_id: str,
        pass_no: int,
        input: dict[str, Any],
        output: dict[str, Any],
        model: str | None,
        progress: dict[str, Any],
        edited: bool = False,
    ) -> FlowCheckpoint:
        """Append one checkpoint. A second one at the same index is refused by the database."""
        cp = FlowCheckpoint(
            run_id=run_id,
            idx=idx,
            step_id=step_id,
            pass_no=pass_no,
            input=input,
            output=output,
            model=model,
            progress=progress,
            edited=edited,
        )
        with self.session() as s:
            s.add(cp)
            s.commit()
        return cp

    def checkpoints(self, run_id: str) -> list[FlowCheckpoint]:
        with self.session() as s:
            stmt = select(FlowCheckpoint).where(FlowCheckpoint.run_id == run_id)
            return list(s.exec(stmt.order_by(col(FlowCheckpoint.idx))))

    def iter_checkpoint_rows(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The raw stored rows, as the database holds them (for byte-level comparisons)."""
        with self.session() as s:
            rows = s.execute(
                sa.text(
                    "SELECT idx, step_id, pass_no, CAST(input AS TEXT) AS input, "
                    "CAST(output AS TEXT) AS output, model, CAST(progress AS TEXT) AS progress, "
                    "edited, created_at FROM flow_checkpoints WHERE run_id = :r ORDER BY idx"
                ),
                {"r": run_id},
            )
            for row in rows:
                yield dict(row._mapping)
