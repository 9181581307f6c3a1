"""One turn, stage by stage. The modules, in the order a message meets them:

1. ``agent``: inbox, the conversation's lock, and the stages below in order (``turn`` holds
   the typed turn they share, ``record`` the record's shape).
2. ``scope``: the deterministic scope check.
3. pre-flight: :mod:`bot.preflight` (a subsystem of its own).
4. ``reading`` (heads, with ``router``, the keyword router, when none is trained).
5. ``values`` and ``valuereader``: values proposed, kept only when the customer wrote them.
6. ``gates``, ``yesno`` and ``followups``: readings against their gates; a value check's answer.
7. ``decide``: the playbook's hard rules, rule table and legal set; flows decide instead while
   one is active (:mod:`bot.flows`).
8. ``act``: templates for deterministic moves; ``drafting``, ``replygate``, ``toolloop`` and
   ``knowledge_tools`` for a model-worded, gated answer.
9. ``forecast``, then the record handed to the recorders.
"""
