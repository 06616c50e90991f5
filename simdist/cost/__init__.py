"""The cost model: collectives priced on topologies, roofline compute, step timelines."""

from simdist.cost import closed_form as closed_form
from simdist.cost.compute import LayerCost as LayerCost
from simdist.cost.compute import OpCost as OpCost
from simdist.cost.compute import layer_costs as layer_costs
from simdist.cost.compute import optimizer_cost as optimizer_cost
from simdist.cost.compute import roofline_time as roofline_time
from simdist.cost.network import CollectiveCost as CollectiveCost
from simdist.cost.network import price as price
from simdist.cost.network import price_collective as price_collective
from simdist.cost.report import NcclRow as NcclRow
from simdist.cost.report import bus_factor as bus_factor
from simdist.cost.report import format_nccl_table as format_nccl_table
from simdist.cost.report import nccl_table as nccl_table
from simdist.cost.report import parse_size as parse_size
from simdist.cost.report import size_range as size_range
from simdist.cost.step import ScalingRow as ScalingRow
from simdist.cost.step import StepCost as StepCost
from simdist.cost.step import format_scaling_table as format_scaling_table
from simdist.cost.step import price_step as price_step
from simdist.cost.step import scaling_table as scaling_table
from simdist.cost.trace import Timeline as Timeline
from simdist.cost.trace import TimelineEvent as TimelineEvent
from simdist.cost.trace import to_chrome_trace as to_chrome_trace
from simdist.cost.trace import write_chrome_trace as write_chrome_trace
