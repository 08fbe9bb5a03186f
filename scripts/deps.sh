#!/usr/bin/env bash
# Installs the Debian packages gwalign needs, only those missing. Sourced by the other scripts.
# clang 14 with its sanitizer/libFuzzer runtimes and LLVM's OpenMP (libomp, Archer) serve the
# ThreadSanitizer and fuzzing stages of scripts/test.sh (scripts/sanitize.sh, scripts/fuzz.sh).
# Runs apt-get as root, or through sudo when not root.
gwalign_install_deps() {
  local packages=(
    cmake g++ ninja-build pkg-config
    libeigen3-dev libboost-graph-dev libhdf5-dev hdf5-tools libcxxopts-dev
    libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
    python3-anndata python3-h5py python3-numpy python3-scipy python3-sklearn python3-pot
    python3-networkx python3-tables
    clang-14 libclang-rt-14-dev libomp-14-dev
    # The Python package (python/) and its tests: build, pytest, the offline wheel build, the
    # progress bar and the plotting example. python3-torch is optional (gwalign.torchgw then
    # returns torch tensors; the cellgraph tests add a torch case) and not installed here: on
    # Debian 12 it is 164 packages, 48 MB to download and 543 MB installed.
    pybind11-dev python3-dev python3-pytest python3-pip python3-setuptools python3-wheel
    python3-tqdm python3-matplotlib
    # `gwalign pairwise` across MPI ranks (GWALIGN_MPI=AUTO builds it when these are present) and
    # the BLAS that POT's exact GW uses in bench/peers/pairwise_pot.py.
    libopenmpi-dev openmpi-bin libopenblas0-pthread
    # LEMON's network simplex, the oracle of the linear-OT tests and benchmarks (linear_ot/).
    liblemon-dev
  )
  local missing=()
  for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "gwalign: installing missing packages: ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
