"""simdist's own additions (not TF names): demo data, and later topologies, costs, launchers."""

from simdist.sim.synthetic_digits import load_synthetic_digits as load_synthetic_digits
