#include "pairwise/mpi.h"

#include <climits>
#include <cstdlib>
#include <string>

#include "core/error.h"

#if GW_HAS_MPI
#include <mpi.h>
#endif

namespace gw::pairwise {

int mpi_launcher_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    char* end = nullptr;
    const long count = std::strtol(value, &end, 10);
    return end != value && *end == '\0' && count >= 1 && count <= INT_MAX ? static_cast<int>(count)
                                                                          : -1;
  }
  return std::getenv("PMIX_RANK") != nullptr ? -1 : 0;
}

#if GW_HAS_MPI
namespace {

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    GW_THROW(ErrorCode::kIo, "MPI " << what << " failed: " << std::string(text, length));
  }
}

class MpiTransport final : public Transport {
 public:
  MpiTransport(int rank, int size) : rank_(rank), size_(size) {
    // counter_[0]: next work item; counter_[1]: items recorded.
    check_mpi(MPI_Win_allocate(rank_ == 0 ? 2 * sizeof(std::int64_t) : 0,
                               sizeof(std::int64_t),
                               MPI_INFO_NULL,
                               MPI_COMM_WORLD,
                               &counter_,
                               &counter_window_),
              "MPI_Win_allocate (work counter)");
  }
  ~MpiTransport() override {
    if (results_window_ != MPI_WIN_NULL) MPI_Win_free(&results_window_);
    MPI_Win_free(&counter_window_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void begin(std::int64_t items) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (results_window_ != MPI_WIN_NULL) MPI_Win_free(&results_window_);
    items_ = items;
    const MPI_Aint bytes =
        rank_ == 0 ? static_cast<MPI_Aint>(items) * static_cast<MPI_Aint>(sizeof(ItemResult)) : 0;
    check_mpi(
        MPI_Win_allocate(
            bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &results_, &results_window_),
        "MPI_Win_allocate (results)");
    if (rank_ == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, counter_window_);
      counter_[0] = 0;
      counter_[1] = 0;
      MPI_Win_unlock(0, counter_window_);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, results_window_);
      for (std::int64_t k = 0; k < items * 5; ++k) results_[k] = 0.0;
      MPI_Win_unlock(0, results_window_);
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  bool next_chunk(std::int64_t chunk, std::int64_t& begin, std::int64_t& end) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::int64_t got = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, counter_window_);
    check_mpi(MPI_Fetch_and_op(&chunk, &got, MPI_INT64_T, 0, 0, MPI_SUM, counter_window_),
              "MPI_Fetch_and_op");
    MPI_Win_unlock(0, counter_window_);
    begin = got;
    end = std::min(got + chunk, items_);
    return begin < items_;
  }

  void record(std::int64_t item, const ItemResult& result) override {
    std::lock_guard<std::mutex> lock(mutex_);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, results_window_);
    check_mpi(MPI_Put(&result,
                      5,
                      MPI_DOUBLE,
                      0,
                      static_cast<MPI_Aint>(item) * 5,
                      5,
                      MPI_DOUBLE,
                      results_window_),
              "MPI_Put");
    MPI_Win_unlock(0, results_window_);
    const std::int64_t one = 1;
    std::int64_t ignored = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, counter_window_);
    check_mpi(MPI_Fetch_and_op(&one, &ignored, MPI_INT64_T, 0, 1, MPI_SUM, counter_window_),
              "MPI_Fetch_and_op");
    MPI_Win_unlock(0, counter_window_);
  }

  std::vector<ItemResult> snapshot() override {
    if (rank_ != 0) return {};
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<ItemResult> out(static_cast<std::size_t>(items_));
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, results_window_);
    for (std::int64_t k = 0; k < items_; ++k) {
      const double* v = results_ + k * 5;
      out[k] = ItemResult{v[0], v[1], v[2], v[3], v[4]};
    }
    MPI_Win_unlock(0, results_window_);
    return out;
  }

  std::int64_t recorded() override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::int64_t value = 0;
    const std::int64_t zero = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, counter_window_);
    MPI_Fetch_and_op(&zero, &value, MPI_INT64_T, 0, 1, MPI_NO_OP, counter_window_);
    MPI_Win_unlock(0, counter_window_);
    return value;
  }

  void barrier() override {
    std::lock_guard<std::mutex> lock(mutex_);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  void broadcast(std::vector<std::int64_t>& values) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::int64_t count = static_cast<std::int64_t>(values.size());
    check_mpi(MPI_Bcast(&count, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    values.resize(static_cast<std::size_t>(count));
    // In pieces below 2^31 elements (MPI counts are int).
    constexpr std::int64_t kPiece = std::int64_t{1} << 28;
    for (std::int64_t start = 0; start < count; start += kPiece) {
      const int n = static_cast<int>(std::min(kPiece, count - start));
      check_mpi(MPI_Bcast(values.data() + start, n, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

 private:
  int rank_;
  int size_;
  std::mutex mutex_;
  std::int64_t items_ = 0;
  std::int64_t* counter_ = nullptr;
  MPI_Win counter_window_ = MPI_WIN_NULL;
  double* results_ = nullptr;
  MPI_Win results_window_ = MPI_WIN_NULL;
};

}  // namespace

bool mpi_compiled() { return true; }

MpiSession::MpiSession(int* argc, char*** argv) {
  if (mpi_launcher_processes() == 0) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  GW_CHECK_CODE(provided >= MPI_THREAD_SERIALIZED,
                ErrorCode::kUnsupported,
                "this MPI library does not offer MPI_THREAD_SERIALIZED; run with --threads 1");
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  transport_ = std::make_unique<MpiTransport>(rank_, size_);
}

MpiSession::~MpiSession() {
  if (!active_) return;
  transport_.reset();
  MPI_Finalize();
}

void MpiSession::abort_all(int code) {
  if (active_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

#else

bool mpi_compiled() { return false; }

// Without MPI, N processes started by mpirun would each compute every pair and race for the
// output; refuse instead, on the same variables the MPI build joins on (a launcher that gives no
// count may have started several).
MpiSession::MpiSession(int*, char***) {
  const int processes = mpi_launcher_processes();
  GW_CHECK_CODE(processes == 0 || processes == 1,
                ErrorCode::kNotCompiled,
                "this gwalign was built without MPI, but runs as one of "
                    << (processes > 1 ? std::to_string(processes) : std::string("several"))
                    << " MPI processes (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK is set); "
                    << "rebuild with MPI (Debian: libopenmpi-dev, cmake -DGWALIGN_MPI=ON) or run "
                    << "one process with --threads, without the launcher");
}
MpiSession::~MpiSession() = default;
void MpiSession::abort_all(int) {}

#endif

}  // namespace gw::pairwise
