from gwalign.torchgw import sampled_lowrank_gw  # noqa: F401
