from gwalign.torchgw import joint_embedding  # noqa: F401
