"""See :mod:`axm_conformance._process`."""
