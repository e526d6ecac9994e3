"""The process boundary: tool code runs in worker processes, and workers in sandboxes.

Three parts, each a package:

- ``parent``: the kit's side. A :class:`Worker` runs ``module:qualname`` targets in a process of
  its own over a pair of pipes (the channel), and reports each call's :class:`Answer`; the
  workers of a run are started ahead of their tools (:class:`WorkersAhead`), spawned or forked
  from a fork server.
- ``child``: what runs in a worker. Its loop answers the parent's calls; the agent opens a tool
  and calls it; around each call it observes what the call left behind (side effects, files,
  exceptions) and reads the tool's source for literals. It never imports the engine, the
  checks or pytest.
- ``system``: the operating system both sides rest on: the platform record, the process table,
  the sweep that ends every process a worker started, and the sandbox every worker or server
  runs in.

Beside them, what both sides share: the channel (``_channel``), the records of a call
(``_records``), and what the machine makes of a run's settings: whether its tools run contained,
and which are not called here (``_containment``).

The parts are imported by their modules' names, never through this package: importing it imports
none of them, so that what runs in a worker loads the child side and the system part alone.
"""

__all__: list[str] = []
