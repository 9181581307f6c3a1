"""A flow's steps, one module per kind: ``ask``, ``router``, ``reply``, ``llm_call``, ``tool``
(with ``change`` for a tool that changes something and ``repeat`` for one a customer calls again
and again, read by ``phrases`` and checked by ``selfcheck``). Each takes the step's turn
(:class:`bot.flows.steps.base.StepTurn`) and what the engine lends it
(:class:`bot.flows.steps.base.StepHost`), and says what the step came to
(:class:`bot.flows.outcome.StepResult`); walking the schedule is :mod:`bot.flows.engine`'s."""
