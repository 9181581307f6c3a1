"""The tool base: something the agent can do in the world, with its safety declared up front.

Every check that keeps a tool safe (schema, ownership, read-back for ``changes``) is enforced by the
runtime around ``run``, never by the model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Tool(ABC):
    name: str = ""
    description: str = ""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    #: A tool that changes anything is read back to the customer and runs only on a confident yes.
    changes: bool = False
    #: Which conversation may use it: "conversation" (only on the caller's own records) or "any".
    ownership: str = "conversation"

    @abstractmethod
    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        """Do the work; return a JSON-able result with a short ``note`` for the record."""
