#!/usr/bin/python3
"""Writes two compressed copies of data/spiral_400.h5 for the CLI's bad-input tests.

  spiral_400_lzf.h5    /points and /angles compressed with LZF (h5py, filter 32000). gwalign
                       decodes LZF itself (anndata's own legacy archives use it), so aligning
                       this file must work exactly like the uncompressed one.
  spiral_400_blosc.h5  /points and /angles compressed with Blosc (PyTables, filter 32001), a
                       filter gwalign does not decode: align must fail with exit status 65 and a
                       message naming the dataset and the filter.

Needs python3-h5py and python3-tables (Debian 12). The arrays are copied, so the output is a
function of spiral_400.h5:
  /usr/bin/python3 data/make_filter_fixtures.py [DATA_DIR]      (default: the folder of this script)
"""
import os
import sys

import h5py
import numpy as np
import tables


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    with h5py.File(os.path.join(data, "spiral_400.h5"), "r") as f:
        points = np.asarray(f["points"])
        angles = np.asarray(f["angles"])

    with h5py.File(os.path.join(data, "spiral_400_lzf.h5"), "w") as f:
        f.create_dataset("points", data=points, compression="lzf", chunks=(100, 2))
        f.create_dataset("angles", data=angles, compression="lzf", chunks=(100,))
        assert f["points"].compression == "lzf"

    filters = tables.Filters(complevel=5, complib="blosc")
    with tables.open_file(os.path.join(data, "spiral_400_blosc.h5"), "w") as f:
        f.create_carray("/", "points", obj=points, filters=filters)
        f.create_carray("/", "angles", obj=angles, filters=filters)
    with h5py.File(os.path.join(data, "spiral_400_blosc.h5"), "r") as f:
        assert 32001 in [int(k) for k in f["points"]._filters], f["points"]._filters
    print("wrote spiral_400_lzf.h5 (h5py %s) and spiral_400_blosc.h5 (PyTables %s)"
          % (h5py.__version__, tables.__version__))


if __name__ == "__main__":
    main()
