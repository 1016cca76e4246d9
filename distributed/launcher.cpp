// What both builds share: recognising a process that an MPI launcher started.
#include <cstdlib>

#include "distributed/distributed.hpp"

namespace minigrad::distributed {

// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE, MPICH's mpiexec PMI_SIZE (and MPI_LOCALNRANKS),
// srun PMI_SIZE or PMIX_RANK, depending on its --mpi plugin.
bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

}  // namespace minigrad::distributed
