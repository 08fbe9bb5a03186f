// Fuzz harness "h5ad": the HDF5 and h5ad readers on arbitrary file bytes, opened in memory through
// HDF5's file-image API (gw::io::Reader::from_image; no temporary files). A file that opens is
// walked as the CLI walks a user's input: describe() every object, read each dataset as float64,
// int64 and strings, each group as CSR and as a matrix, the attributes, and the AnnData view
// (obs/var names, entries, X, obsm, obsp, obs columns). Every failure must be a gw::Error.
//
// HDF5 itself (Debian's libhdf5, not instrumented) is the parser of the container format; what is
// fuzzed here is gwalign's handling of what HDF5 hands back (shapes, dtypes, CSR arrays, strings,
// attributes) and the absence of crashes in the combination.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <H5public.h>

#include "core/error.h"
#include "cpu_watchdog.h"
#include "io/h5ad.h"
#include "io/hdf5.h"

namespace {

// Datasets larger than this are skipped: the bytes of a small file can declare a huge dataspace
// (a 2^40-element dataset of fill values), and reading it would only measure the allocator.
constexpr std::int64_t kMaxElements = 1 << 20;

template <typename Fn>
void attempt(Fn&& fn) {
  try {
    fn();
  } catch (const gw::Error&) {
  }
}

std::int64_t elements(const gw::io::ObjectInfo& info) {
  std::int64_t n = 1;
  for (std::int64_t d : info.shape) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) return kMaxElements + 1;
    n *= d;
  }
  return n;
}

// Reads everything once describe() has listed the objects. A file whose largest dataset exceeds
// kMaxElements is only described (groups read as CSR or as a matrix read their member datasets).
bool walk(const gw::io::Reader& file) {
  std::vector<gw::io::ObjectInfo> objects;
  attempt([&] { objects = file.describe(); });
  bool small = true;
  for (const auto& info : objects) {
    if (info.kind == gw::io::ObjectKind::kDataset && elements(info) > kMaxElements) small = false;
  }
  for (const auto& info : objects) {
    attempt([&] { (void)file.kind(info.path); });
    for (const auto& name : info.attributes) {
      attempt([&] { (void)file.attribute_dtype(info.path, name); });
      attempt([&] { (void)file.read_string_array_attribute(info.path, name); });
      attempt([&] { (void)file.read_attribute<double>(info.path, name); });
    }
    if (!small) continue;
    if (info.kind == gw::io::ObjectKind::kDataset) {
      attempt([&] { (void)file.read_array<double>(info.path); });
      attempt([&] { (void)file.read_array<std::int64_t>(info.path, 2); });
      attempt([&] { (void)file.read_array<std::uint8_t>(info.path); });
      attempt([&] { (void)file.read_strings(info.path); });
      attempt([&] { (void)gw::io::read_matrix<float>(file, info.path); });
    } else if (info.kind == gw::io::ObjectKind::kGroup) {
      attempt([&] { (void)file.list(info.path); });
      attempt([&] { (void)gw::io::matrix_format(file, info.path); });
      attempt([&] { (void)file.read_csr<float>(info.path); });
      attempt([&] { (void)gw::io::read_matrix<double>(file, info.path); });
    }
  }
  return small;
}

void walk_anndata(gw::io::Reader file) {
  const gw::io::H5adReader h5ad(std::move(file));
  attempt([&] { (void)h5ad.is_anndata(); });
  attempt([&] { (void)h5ad.n_obs(); });
  attempt([&] { (void)h5ad.n_vars(); });
  attempt([&] { (void)h5ad.obs_names(); });
  attempt([&] { (void)h5ad.var_names(); });
  attempt([&] { (void)h5ad.uns_keys(); });
  attempt([&] { (void)h5ad.entries(); });
  attempt([&] { (void)h5ad.read_x<float>(); });
  std::vector<std::string> keys;
  attempt([&] { keys = h5ad.obsm_keys(); });
  for (const auto& key : keys) attempt([&] { (void)h5ad.read_obsm<float>(key); });
  keys.clear();
  attempt([&] { keys = h5ad.obsp_keys(); });
  for (const auto& key : keys) attempt([&] { (void)h5ad.read_obsp<float>(key); });
  keys.clear();
  attempt([&] { keys = h5ad.obs_columns(); });
  for (const auto& column : keys) attempt([&] { (void)h5ad.read_obs_column(column); });
}

}  // namespace

// The library's own guard (gw::io::set_max_read_bytes) at the harness's budget: the AnnData view
// reads whatever the file declares (obs names, columns), and a declared shape beyond the budget
// must end in gw::Error, not in an allocation the sanitizer aborts on. 16 MiB: twice what the walk
// above reads of one dataset (kMaxElements doubles); a larger budget only lets a file of a few
// bytes declare a dataset of fill values that HDF5 then writes out page by page (at 256 MiB, page
// faults and memset were two thirds of the harness's time).
// No limits on HDF5's free lists: by default a list keeps at most 64 KiB of freed blocks, so the
// metadata cache HDF5 callocs at every file open (over 512 KiB, most of it the cache's hash table)
// went back to the allocator when the file closed and came back as fresh pages at the next
// input's open -- a 4 KiB page fault costs ~12 us on the VMs we fuzz on, and these were a fifth of
// a typical input's time. Kept on the list, the block is reused; HDF5 still zeroes it.
// The CPU-time watchdog (cpu_watchdog.h) is armed only when GW_FUZZ_CPU_LIMIT_MS is set, as
// scripts/fuzz.sh does: HDF5's endless loops on corrupt files then cost a fraction of a second of
// the run instead of libFuzzer's 1-2 s.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  gw::io::set_max_read_bytes(std::size_t{16} << 20);
  H5set_free_list_limits(-1, -1, -1, -1, -1, -1);
  gw_fuzz::enable_cpu_watchdog(argc, argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gw_fuzz::CpuWatchdogScope watchdog(data, size);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    // One open serves both walks: opening is most of a small input's cost (HDF5 callocs and
    // zero-fills its metadata cache, and under ASan those pages are fresh every time).
    gw::io::Reader file = gw::io::Reader::from_image(bytes, "fuzz.h5ad");
    if (walk(file)) walk_anndata(std::move(file));
  } catch (const gw::Error&) {
  }
  return 0;
}
