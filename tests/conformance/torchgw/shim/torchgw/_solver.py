from gwalign.torchgw import sampled_gw  # noqa: F401  (public function; private helpers not shimmed)
