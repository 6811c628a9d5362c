# module.mk - capture builds its own artifacts next to libtrainscope:
#   build/libtrainscope-trace.so    the host tracing API (rt_*.c) and the raw -> JSON converter
#   build/libtrainscope-preload.so  what LD_PRELOAD loads: exec/_exit hooks and the collectors in
#                                   CAPTURE_PRELOAD_SRCS; linked to libtrainscope-trace.so (one runtime)
#   build/libtrainscope-mpi.so      PMPI interposition, built only when mpicc reports mpi.h
# They never link the analysis library, and are compiled without sanitizers even
# under SAN=1 because they are loaded into programs that are not sanitized.
# raw2json.c is also in libtrainscope: `record` converts streams a process left.
# The unit test links the runtime objects (sanitized under SAN=1) directly.

# This file is included before the Makefile names `all`; keep `all` the default.
.DEFAULT_GOAL := all

CAP_OBJ     := $(BUILD)/capobj
CAP_CFLAGS  := $(CFLAGS_BASE) -O2 -g
CAPTURE_TRACE_SRCS   := $(wildcard src/capture/rt_*.c) src/capture/raw2json.c
CAPTURE_PRELOAD_SRCS := src/capture/preload.c
CAPTURE_MPI_SRCS     := $(wildcard src/capture/mpi.c)
MPI_CFLAGS  := $(shell mpicc -showme:compile 2>/dev/null)

LIB_SRCS := $(filter-out $(wildcard src/capture/rt_*.c) $(CAPTURE_PRELOAD_SRCS) $(CAPTURE_MPI_SRCS),$(LIB_SRCS))

CAP_TRACE_OBJS   = $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_TRACE_SRCS))
CAP_PRELOAD_OBJS = $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_PRELOAD_SRCS))
CAP_MPI_OBJS     = $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_MPI_SRCS))

EXTRA_TARGETS += $(BUILD)/libtrainscope-trace.so $(BUILD)/libtrainscope-preload.so
ifneq ($(and $(MPI_CFLAGS),$(CAPTURE_MPI_SRCS)),)
EXTRA_TARGETS += $(BUILD)/libtrainscope-mpi.so
endif

$(CAP_OBJ)/capture/mpi.o: src/capture/mpi.c
	@mkdir -p $(dir $@)
	$(CC) $(CAP_CFLAGS) $(MPI_CFLAGS) -MMD -MP -c $< -o $@

$(CAP_OBJ)/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CAP_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libtrainscope-trace.so: $(CAP_TRACE_OBJS)
	$(CC) -shared -o $@ $^ -pthread -lm -ldl

$(BUILD)/libtrainscope-preload.so: $(CAP_PRELOAD_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_PRELOAD_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN' -pthread -ldl

$(BUILD)/libtrainscope-mpi.so: $(CAP_MPI_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_MPI_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN' -pthread -ldl

# test_capture exercises the runtime in-process (built like the library, sanitized under SAN=1).
CAP_TEST_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(wildcard src/capture/rt_*.c))
$(BUILD)/test/test_capture: $(CAP_TEST_OBJS)
$(BUILD)/test/test_capture: TEST_LDLIBS += $(CAP_TEST_OBJS) -ldl

-include $(wildcard $(CAP_OBJ)/capture/*.d)
