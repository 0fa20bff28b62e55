"""Rows: what the server, batch, reports, reverify and NeMo Gym share about ``/verify`` rows.

* :mod:`~critpt_grader.rows.intake`: the one way in: bytes, text or a dict to a prepared row
  (bounded parse, input contract, task, one extraction, the request key);
* :mod:`~critpt_grader.rows.request_key`: a request's idempotency key;
* :mod:`~critpt_grader.rows.tasksets`: task sets loaded from files, looked up by problem id;
* :mod:`~critpt_grader.rows.resolve`: a row's task (in the row or by ``problem_id``) and the
  row echoed with its verdict;
* :mod:`~critpt_grader.rows.rejected`: a row that will not be graded, and its error shape;
* :mod:`~critpt_grader.rows.metrics`: pass@k, pass@1[avg-of-k] and majority@k over rows.

Nothing here speaks HTTP: the server (:mod:`critpt_grader.server`) is one shell around it.
"""
