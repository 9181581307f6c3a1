"""What the hosted-model providers share: one call policy and one way to shape a chat.

Not a plugin (it implements no hooks): ``gatebot_anthropic`` and ``gatebot_openai`` import it, so
the timeout, retry and error rules are written once and behave the same behind every API.
"""

from __future__ import annotations

from gatebot_providers_common.chat import alternating
from gatebot_providers_common.policy import (
    CallPolicy,
    SdkErrors,
    call_with_retries,
    env,
    redact,
)

__all__ = ["CallPolicy", "SdkErrors", "alternating", "call_with_retries", "env", "redact"]
