"""Device topologies: the graph of devices, switches and links, presets, routing and files.

``get_topology("dgx-h100")`` builds a preset; :func:`route` gives the links a transfer
crosses; :func:`load_topology` reads simdist JSON or ASTRA-sim ``network.yml`` files.
"""

from simdist.topology.builders import NOMINAL_DEVICE as NOMINAL_DEVICE
from simdist.topology.builders import fully_connected as fully_connected
from simdist.topology.builders import multi_node as multi_node
from simdist.topology.builders import pcie_tree as pcie_tree
from simdist.topology.builders import ring as ring
from simdist.topology.builders import switch as switch
from simdist.topology.builders import torus as torus
from simdist.topology.files import load_astra_network as load_astra_network
from simdist.topology.files import load_topology as load_topology
from simdist.topology.files import parse_astra_network as parse_astra_network
from simdist.topology.files import save_topology as save_topology
from simdist.topology.files import topology_from_dict as topology_from_dict
from simdist.topology.files import topology_to_dict as topology_to_dict
from simdist.topology.hierarchy import multi_dim as multi_dim
from simdist.topology.model import Device as Device
from simdist.topology.model import Link as Link
from simdist.topology.model import Switch as Switch
from simdist.topology.model import Topology as Topology
from simdist.topology.presets import get_topology as get_topology
from simdist.topology.presets import list_topologies as list_topologies
from simdist.topology.routing import hop_count as hop_count
from simdist.topology.routing import route as route
from simdist.topology.routing import route_ranks as route_ranks
from simdist.topology.system import GpuSystem as GpuSystem
from simdist.topology.tpu import TPU_TENSORCORES_PER_CHIP as TPU_TENSORCORES_PER_CHIP
from simdist.topology.tpu import tensorcores_per_chip as tensorcores_per_chip
from simdist.topology.tpu import tpu_generation as tpu_generation
from simdist.topology.tpu import tpu_slice as tpu_slice
