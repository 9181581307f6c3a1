"""Help desks: where an escalation goes, and the relay between staff and customer.

An escalation is posted to the help desk the pack names for its kind (a Slack or Discord channel
adapter does the posting). Staff take over (the agent pauses), reply in the thread (each reply
reaches the customer on the customer's own channel, with the staff member recorded), hand back
(the agent resumes, the staff messages in its transcript) or resolve (an outcome is recorded).
Every staff action goes through :meth:`HelpDesks.act`. An escalation nobody takes in time goes to
the desk's email address, and a failure to send is kept on the escalation, never reported as
sent.

Modules: ``channel`` (what a desk's platform implements, the error), ``summary`` (what staff
read), ``desks`` (opening, acting, relaying), ``sweep`` (email for unclaimed escalations).
"""

from bot.helpdesk.channel import (
    CustomerChannel,
    HelpDeskChannel,
    HelpDeskError,
    NotAMember,
    UnknownEscalation,
    desk_channels,
)
from bot.helpdesk.desks import VERBS, Acted, HelpDesks, describe
from bot.helpdesk.summary import TRANSCRIPT_LINES, summary

__all__ = [
    "TRANSCRIPT_LINES",
    "VERBS",
    "Acted",
    "CustomerChannel",
    "HelpDeskChannel",
    "HelpDeskError",
    "HelpDesks",
    "NotAMember",
    "UnknownEscalation",
    "describe",
    "desk_channels",
    "summary",
]
