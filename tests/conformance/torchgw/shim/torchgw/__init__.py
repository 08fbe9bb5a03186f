"""The reference sampled-GW package's public names, served by gwalign.torchgw: the shim that
scripts/torchgw-conformance.sh puts ahead of gwalign on PYTHONPATH so the reference's own tests
import ours."""
from gwalign.torchgw import sampled_gw, sampled_lowrank_gw, build_knn_graph, joint_embedding

__all__ = ["sampled_gw", "sampled_lowrank_gw", "build_knn_graph", "joint_embedding"]
