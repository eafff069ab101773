/* mpi_sendrecv.c - the host MPI exchange of the z-slabs alone: each rank of a chain sends
 * BYTES to each neighbour and receives as much (two MPI_Sendrecv, as rtm_mpi_exchange_staged
 * does), ITERATIONS times; rank 0 prints the seconds an exchange and the bytes a second one
 * rank moves out. Used by mpi_overlap_probe.sh to measure what the staged transport's MPI
 * leg costs on a machine, apart from the GPU.
 *   mpicc -O2 mpi_sendrecv.c -o mpi_sendrecv && mpirun -np 2 ./mpi_sendrecv BYTES ITERATIONS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 4u << 20;
  const int iterations = argc > 2 ? atoi(argv[2]) : 100;
  char *first = malloc(bytes), *last = malloc(bytes), *below = malloc(bytes), *above = malloc(bytes);
  memset(first, 1, bytes);
  memset(last, 2, bytes);
  const int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  double best = 1e30, total = 0;
  for (int i = 0; i < iterations + 5; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    MPI_Sendrecv(last, (int)bytes, MPI_BYTE, up, 1, below, (int)bytes, MPI_BYTE, down, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(first, (int)bytes, MPI_BYTE, down, 2, above, (int)bytes, MPI_BYTE, up, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const double seconds = MPI_Wtime() - start;
    if (i >= 5) {
      total += seconds;
      if (seconds < best) best = seconds;
    }
  }
  if (rank == 0)
    printf("sendrecv %zu bytes: mean %.3f ms, best %.3f ms, %.2f GB/s out of a rank (mean)\n",
           bytes, 1e3 * total / iterations, 1e3 * best, bytes / (total / iterations) / 1e9);
  free(first);
  free(last);
  free(below);
  free(above);
  MPI_Finalize();
  return 0;
}
