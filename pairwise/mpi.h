// MPI for `gwalign pairwise`: a session that is active only in an MPI build launched by mpirun,
// and the Transport that spreads the pair list over its ranks.
//
// Work is handed out through a shared counter in an MPI window on rank 0 (MPI_Fetch_and_op,
// passive target: rank 0 never stops computing to serve requests), and each result is put into
// rank 0's result window (MPI_Put under a shared lock), where rank 0 reads it for checkpoints.
// MPI is initialized with MPI_THREAD_SERIALIZED; the transport serializes its MPI calls with one
// mutex, so any thread of a rank may call it.
#pragma once

#include <memory>

#include "pairwise/transport_impl.h"

namespace gw::pairwise {

// Whether this build has MPI (GWALIGN_MPI found it).
bool mpi_compiled();

// How many processes an MPI launcher (mpirun, srun) started, from what it puts in the
// environment: 0 when none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK is set (no launcher);
// the count in OMPI_COMM_WORLD_SIZE or PMI_SIZE; -1 when a launcher is seen but gives no count
// (PMIX_RANK alone) or an unreadable one. Both builds decide by it (MpiSession).
int mpi_launcher_processes();

class MpiSession {
 public:
  // Initializes MPI when the build has it and the process was started by an MPI launcher
  // (mpi_launcher_processes() != 0); otherwise inactive, and a single process runs as rank 0 of
  // 1. A build without MPI started by a launcher of more than one process, or of an unknown count,
  // throws kNotCompiled (each process would otherwise compute every pair).
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The transport over all ranks (nullptr when inactive: run_pairwise then works alone).
  Transport* transport() { return transport_.get(); }
  // Ends every rank with `code` (MPI_Abort) when active with more than one rank; returns
  // otherwise.
  void abort_all(int code);

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<Transport> transport_;
};

}  // namespace gw::pairwise
