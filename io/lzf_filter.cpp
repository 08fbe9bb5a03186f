// LZF decoding as HDF5 filter 32000, so that h5ad files written with compression="lzf" (h5py's
// own filter, and the format of anndata's legacy test archives) can be read without h5py's
// plugin. Decode only: gwalign never writes LZF.
//
// LZF block format (liblzf 3.x): a sequence of runs, each introduced by a control byte c:
//   c < 32:  a literal run of c + 1 bytes copied from the input;
//   c >= 32: a back reference of length (c >> 5) + 2, where a length field of 7 is extended by
//            the next input byte; the distance is ((c & 31) << 8 | next byte) + 1 bytes back in
//            the output. Source and destination may overlap (run-length style repeats), so the
//            copy goes byte by byte.
// h5py's filter stores the uncompressed chunk size in cd_values[2], and every chunk must decode to
// exactly that many bytes (anything else fails the read); chunks that did not compress
// are stored raw with the filter skipped through the chunk's filter mask, so they never get here.
#include <algorithm>
#include <cstring>

#include "io/hdf5_handle_impl.h"

namespace gw::io::detail {

std::ptrdiff_t lzf_decode(const std::uint8_t* in,
                          std::size_t in_size,
                          std::uint8_t* out,
                          std::size_t out_size) {
  const std::uint8_t* ip = in;
  const std::uint8_t* const in_end = in + in_size;
  std::uint8_t* op = out;
  std::uint8_t* const out_end = out + out_size;
  while (ip < in_end) {
    const unsigned control = *ip++;
    if (control < 32) {
      const std::size_t length = control + 1;
      if (static_cast<std::size_t>(in_end - ip) < length) return -2;
      if (static_cast<std::size_t>(out_end - op) < length) return -1;
      std::memcpy(op, ip, length);
      op += length;
      ip += length;
      continue;
    }
    std::size_t length = control >> 5;
    if (length == 7) {
      if (ip >= in_end) return -2;
      length += *ip++;
    }
    if (ip >= in_end) return -2;
    const std::size_t distance = ((static_cast<std::size_t>(control & 31) << 8) | *ip++) + 1;
    length += 2;
    if (static_cast<std::size_t>(op - out) < distance) return -2;
    if (static_cast<std::size_t>(out_end - op) < length) return -1;
    const std::uint8_t* ref = op - distance;
    for (std::size_t i = 0; i < length; ++i) op[i] = ref[i];
    op += length;
  }
  return op - out;
}

namespace {

constexpr H5Z_filter_t kLzfFilterId = 32000;
// Growth steps when cd_values does not give the chunk size: x4 the input, doubled up to 2^6 times.
constexpr int kMaxGrowthSteps = 6;

size_t lzf_filter(unsigned int flags,
                  size_t cd_nelmts,
                  const unsigned int cd_values[],
                  size_t nbytes,
                  size_t* buf_size,
                  void** buf) {
  if ((flags & H5Z_FLAG_REVERSE) == 0) return 0;  // no encoder: writing LZF fails cleanly
  const bool size_known = cd_nelmts >= 3 && cd_values[2] != 0;
  std::size_t out_size =
      size_known ? static_cast<std::size_t>(cd_values[2]) : std::max<std::size_t>(4 * nbytes, 64);
  for (int step = 0; step <= kMaxGrowthSteps; ++step) {
    void* out = H5allocate_memory(out_size, false);
    if (out == nullptr) return 0;
    const std::ptrdiff_t written = lzf_decode(
        static_cast<const std::uint8_t*>(*buf), nbytes, static_cast<std::uint8_t*>(out), out_size);
    // A chunk always decodes to the whole chunk (HDF5 stores edge chunks at full size), but HDF5
    // does not compare the size a filter returns with the chunk's: a chunk that decoded short would
    // hand the rest of the buffer, uninitialised, to the caller as data. Where h5py recorded the
    // size, any other length (shorter, or longer than the buffer) is a corrupt chunk.
    if (size_known && written != static_cast<std::ptrdiff_t>(out_size)) {
      H5free_memory(out);
      return 0;
    }
    if (written >= 0) {
      H5free_memory(*buf);
      *buf = out;
      *buf_size = out_size;
      return static_cast<size_t>(written);
    }
    H5free_memory(out);
    if (written != -1) return 0;  // corrupt input: HDF5 reports a read failure
    out_size *= 2;
  }
  return 0;
}

}  // namespace

bool register_lzf_filter() {
  if (H5Zfilter_avail(kLzfFilterId) > 0) {
    // Already registered (by us, or by a plugin or h5py in the same process): keep it.
    unsigned int config = 0;
    if (H5Zget_filter_info(kLzfFilterId, &config) >= 0 &&
        (config & H5Z_FILTER_CONFIG_DECODE_ENABLED) != 0) {
      return true;
    }
  }
  static const H5Z_class2_t lzf_class = {
      H5Z_CLASS_T_VERS,
      kLzfFilterId,
      /*encoder_present=*/0,
      /*decoder_present=*/1,
      "lzf",
      /*can_apply=*/nullptr,
      /*set_local=*/nullptr,
      lzf_filter,
  };
  return H5Zregister(&lzf_class) >= 0;
}

}  // namespace gw::io::detail
