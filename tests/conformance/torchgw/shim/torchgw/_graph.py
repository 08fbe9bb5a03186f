from gwalign.torchgw import build_knn_graph  # noqa: F401
