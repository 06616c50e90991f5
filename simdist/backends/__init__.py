"""Transports: how the workers of a cluster reach each other.

``inprocess`` (the virtual cluster's workers, threads of one process), ``mpi`` (processes
under ``mpiexec``) and ``sockets`` (processes started one per ``TF_CONFIG``); all execute
the same collective plans with the same arithmetic and obey the same no-hang rules (see
docs/multi-process.md).
"""
