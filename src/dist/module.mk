# module.mk - src/dist/: build/libtrainscope_dist.so, the MPI transport of a
# distributed run (docs/distributed.md). The CLI dlopen()s it only under MPI
# or --distributed, so neither the CLI nor libtrainscope links libmpi. Built
# when mpicc reports MPI's flags; compiled without sanitizers (like capture's
# libraries), as MPI's own libraries are not.
DIST_MPI_CFLAGS := $(shell mpicc -showme:compile 2>/dev/null)
DIST_MPI_LIBS   := $(shell mpicc -showme:link 2>/dev/null)
ifneq ($(DIST_MPI_CFLAGS),)
EXTRA_TARGETS += $(BUILD)/libtrainscope_dist.so
endif
$(BUILD)/distobj/mpi.o: src/dist/mpi.c src/dist/dist.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -g $(DIST_MPI_CFLAGS) -c $< -o $@
$(BUILD)/libtrainscope_dist.so: $(BUILD)/distobj/mpi.o
	$(CC) -shared -o $@ $< $(DIST_MPI_LIBS)
