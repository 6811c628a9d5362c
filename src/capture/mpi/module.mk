# src/capture/mpi/ - the MPI collector (PMPI interposition), built when mpicc
# reports mpi.h.
# Which library each file joins (file:library, see src/capture/module.mk):
CAPTURE_FILES += \
    mpi/mpi.c:mpi
