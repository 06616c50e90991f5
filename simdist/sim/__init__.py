"""simdist's own additions (not TF names): topologies, collectives, costs, demo data.

The packages stay the home of each piece (``simdist.topology``, ``simdist.collectives``,
``simdist.cost``); this module gathers the names a user reaches for first.
"""

from simdist import collectives as collectives
from simdist import cost as cost
from simdist import topology as topology
from simdist.core.blas_threads import blas_threads as blas_threads
from simdist.core.blas_threads import set_blas_threads as set_blas_threads
from simdist.cost import nccl_table as nccl_table
from simdist.cost import price_collective as price_collective
from simdist.cost import price_step as price_step
from simdist.cost import scaling_table as scaling_table
from simdist.cost import write_chrome_trace as write_chrome_trace
from simdist.cost.parameter_server import PSStepCost as PSStepCost
from simdist.cost.parameter_server import price_ps_step as price_ps_step
from simdist.distribute.faults import FaultPlan as FaultPlan
from simdist.distribute.faults import PSFailure as PSFailure
from simdist.distribute.faults import WorkerFailure as WorkerFailure
from simdist.distribute.faults import WorkerKilled as WorkerKilled
from simdist.sim.check_input import check_input as check_input
from simdist.sim.check_step import check_script as check_script
from simdist.sim.check_step import check_step as check_step
from simdist.sim.launch import launch as launch
from simdist.sim.launch import launch_script as launch_script
from simdist.sim.profile import profile as profile
from simdist.sim.profile_report import ProfileReport as ProfileReport
from simdist.sim.sensitivity import SensitivityReport as SensitivityReport
from simdist.sim.sensitivity import reduction_sensitivity as reduction_sensitivity
from simdist.sim.synthetic_digits import load_synthetic_digits as load_synthetic_digits
from simdist.topology import get_topology as get_topology
from simdist.topology import list_topologies as list_topologies
from simdist.topology import load_topology as load_topology
