# module.mk - capture builds its own artifacts next to libtrainscope, one
# role folder each (which file joins which library: src/capture/<role>/module.mk):
#   build/libtrainscope-trace.so    the host tracing API (runtime/) and the raw -> JSON converter (common/)
#   build/libtrainscope-preload.so  what LD_PRELOAD loads: exec/_exit hooks (preload/);
#                                   linked to libtrainscope-trace.so (one runtime)
#   build/libtrainscope-mpi.so      PMPI interposition (mpi/), built only when mpicc reports mpi.h
# They never link the analysis library, and are compiled without sanitizers even
# under SAN=1 because they are loaded into programs that are not sanitized.
# raw2json.c is also in libtrainscope: `record` converts streams a process left.
# The unit test links the runtime objects (sanitized under SAN=1) directly.

# This file is included before the Makefile names `all`; keep `all` the default.
.DEFAULT_GOAL := all

CAP_OBJ     := $(BUILD)/capobj
CAP_CFLAGS  := $(CFLAGS_BASE) -O2 -g

# Which library each capture file joins is written in one list per role
# folder, src/capture/<role>/module.mk, as file:library entries in
# CAPTURE_FILES. Libraries: trace, preload, mpi, cuda, nccl, lttng (the
# build/libtrainscope-<name>.so above and below) and libtrainscope (the
# analysis library). A .c file that no list names, one at the top of
# src/capture/, a listed file that is missing or an unknown library stops
# the build, so a new file never joins (or leaves) a library unseen.
CAPTURE_ROLES := common runtime preload mpi cuda nccl lttng
CAPTURE_LIBS  := trace preload mpi cuda nccl lttng libtrainscope
CAPTURE_FILES :=
include $(foreach r,$(CAPTURE_ROLES),src/capture/$(r)/module.mk)
TS_CAPTURE_BADLIB := $(filter-out $(addprefix %:,$(CAPTURE_LIBS)),$(CAPTURE_FILES))
ifneq ($(TS_CAPTURE_BADLIB),)
$(error src/capture: $(TS_CAPTURE_BADLIB): the library after ':' is not one of $(CAPTURE_LIBS))
endif
ts_capture_srcs = $(addprefix src/capture/,$(patsubst %:$(1),%,$(filter %:$(1),$(CAPTURE_FILES))))
TS_CAPTURE_LISTED := $(sort $(foreach l,$(CAPTURE_LIBS),$(call ts_capture_srcs,$(l))))
TS_CAPTURE_UNLISTED := $(filter-out $(TS_CAPTURE_LISTED),$(wildcard src/capture/*.c src/capture/*/*.c))
ifneq ($(TS_CAPTURE_UNLISTED),)
$(error $(TS_CAPTURE_UNLISTED): in no library list; name it in its folder's module.mk (file:library))
endif
TS_CAPTURE_MISSING := $(filter-out $(wildcard $(TS_CAPTURE_LISTED)),$(TS_CAPTURE_LISTED))
ifneq ($(TS_CAPTURE_MISSING),)
$(error $(TS_CAPTURE_MISSING): listed in src/capture/*/module.mk but not there)
endif

CAPTURE_TRACE_SRCS   := $(call ts_capture_srcs,trace)
CAPTURE_PRELOAD_SRCS := $(call ts_capture_srcs,preload)
CAPTURE_MPI_SRCS     := $(call ts_capture_srcs,mpi)
CAPTURE_CUDA_SRCS    := $(call ts_capture_srcs,cuda)
CAPTURE_NCCL_SRCS    := $(call ts_capture_srcs,nccl)
CAPTURE_LTTNG_SRCS   := $(call ts_capture_srcs,lttng)
MPI_CFLAGS  := $(shell mpicc -showme:compile 2>/dev/null)

# The Makefile's glob of src/capture/*.c finds nothing (every file is in a
# role folder); the analysis library takes what the lists give it.
LIB_SRCS += $(call ts_capture_srcs,libtrainscope)

CAP_TRACE_OBJS   = $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_TRACE_SRCS))
CAP_PRELOAD_OBJS = $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_PRELOAD_SRCS))
CAP_MPI_OBJS     = $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_MPI_SRCS))

# The tracing library may be dlopen'ed (Python's ctypes), so its thread-locals
# use the dynamic TLS model; TLS descriptors keep that nearly as cheap as
# initial-exec on x86-64.
ifeq ($(shell uname -m),x86_64)
$(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_TRACE_SRCS)): CAP_CFLAGS += -mtls-dialect=gnu2
endif

EXTRA_TARGETS += $(BUILD)/libtrainscope-trace.so $(BUILD)/libtrainscope-preload.so
ifneq ($(and $(MPI_CFLAGS),$(CAPTURE_MPI_SRCS)),)
EXTRA_TARGETS += $(BUILD)/libtrainscope-mpi.so
endif

$(CAP_OBJ)/capture/mpi/mpi.o: src/capture/mpi/mpi.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CAP_CFLAGS) $(MPI_CFLAGS) -MMD -MP -c $< -o $@

$(CAP_OBJ)/%.o: src/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CAP_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libtrainscope-trace.so: $(CAP_TRACE_OBJS)
	$(CC) -shared -o $@ $^ -pthread -lm -ldl

$(BUILD)/libtrainscope-preload.so: $(CAP_PRELOAD_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_PRELOAD_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN' -pthread -ldl

$(BUILD)/libtrainscope-mpi.so: $(CAP_MPI_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_MPI_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN' -pthread -ldl

# test_capture exercises the runtime in-process (built like the library, sanitized under SAN=1):
# the trace library's files that libtrainscope.a does not already hold.
CAP_TEST_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(filter-out $(call ts_capture_srcs,libtrainscope),$(CAPTURE_TRACE_SRCS)))
$(BUILD)/test/test_capture: $(CAP_TEST_OBJS)
$(BUILD)/test/test_capture: TEST_LDLIBS += $(CAP_TEST_OBJS) -ldl

# bench/capture: the tracing library next to an LTTng-UST provider (when its headers exist).
TS_LTTNG_UST_H := $(firstword $(wildcard /usr/include/lttng/tracepoint.h /usr/include/*/lttng/tracepoint.h))
$(BUILD)/bench/capture: $(BUILD)/libtrainscope-trace.so bench/capture_tp.h
$(BUILD)/bench/capture: CFLAGS += -Ibench
$(BUILD)/bench/capture: MODULE_LDLIBS += -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN/..' -ldl \
    $(if $(TS_LTTNG_UST_H),-llttng-ust)

-include $(wildcard $(CAP_OBJ)/capture/*/*.d)

# ---- GPU collectors (capture-gpu) ----
#   build/libtrainscope-cuda.so  CUPTI collector (cuda/), loadable by LD_PRELOAD or
#                                CUDA_INJECTION64_PATH; built only when cupti.h is found
#   build/libtrainscope-nccl.so  NCCL interposition (nccl/); built only when nccl.h is found
#   build/libtrainscope-lttng.so the LTTng backend (lttng/lttng.c, tracepoints in lttng_tp.h), preloaded
#                                ahead of libtrainscope-trace.so; built when lttng-ust is found.
#                                lttng_session.c (session control for `record`) is in libtrainscope.
# All three link libtrainscope-trace.so (one runtime); the CUDA ones find CUDA libraries by rpath.
# test_cupti / test_nccl get -DTS_HAVE_CUPTI / -DTS_HAVE_NCCL and the collector
# objects; without the headers they compile to empty test binaries.
CAPTURE_GPU_SRCS := $(CAPTURE_CUDA_SRCS) $(CAPTURE_NCCL_SRCS) $(CAPTURE_LTTNG_SRCS)
TS_CUDA_INC := $(patsubst %/cupti.h,%,$(firstword $(wildcard $(CUDA_HOME)/include/cupti.h \
                 $(CUDA_HOME)/extras/CUPTI/include/cupti.h)))
TS_CUDA_LIB := $(patsubst %/,%,$(dir $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so \
                 $(CUDA_HOME)/lib/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so))))
TS_NCCL_INC := $(patsubst %/nccl.h,%,$(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h)))
TS_NCCL_LIB := $(patsubst %/,%,$(dir $(firstword $(wildcard $(CUDA_HOME)/lib64/libnccl.so \
                 $(CUDA_HOME)/lib/libnccl.so /usr/lib/x86_64-linux-gnu/libnccl.so))))
TS_GPU_CFLAGS := $(addprefix -isystem ,$(sort $(TS_CUDA_INC) $(TS_NCCL_INC)))
$(patsubst src/%.c,$(BUILD)/obj/%.o,$(CAPTURE_GPU_SRCS)): MODULE_CFLAGS += $(TS_GPU_CFLAGS)
$(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_GPU_SRCS)): CAP_CFLAGS += $(TS_GPU_CFLAGS)

ifneq ($(and $(TS_CUDA_INC),$(TS_CUDA_LIB)),)
CAP_CUDA_OBJS := $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_CUDA_SRCS))
EXTRA_TARGETS += $(BUILD)/libtrainscope-cuda.so
$(BUILD)/libtrainscope-cuda.so: $(CAP_CUDA_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_CUDA_OBJS) -L$(BUILD) -ltrainscope-trace -L$(TS_CUDA_LIB) -lcupti \
	    -Wl,-rpath,'$$ORIGIN' -Wl,-rpath,$(TS_CUDA_LIB) -pthread -ldl
TS_CUPTI_TEST_OBJS := $(BUILD)/obj/capture/cuda/cupti_convert.o $(BUILD)/obj/capture/cuda/cupti_ranges.o
$(BUILD)/test/test_cupti: test/unit/test_cupti.c $(BUILD)/test/test_main.o $(TS_CUPTI_TEST_OBJS) $(BUILD)/libtrainscope-trace.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest $(TS_GPU_CFLAGS) -DTS_HAVE_CUPTI $(LDFLAGS) -o $@ $< $(BUILD)/test/test_main.o \
	    $(TS_CUPTI_TEST_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN/..' -ldl \
	    -L$(TS_CUDA_LIB) -lcupti -Wl,-rpath,$(TS_CUDA_LIB)
endif

ifneq ($(and $(TS_NCCL_INC),$(TS_NCCL_LIB)),)
CAP_NCCL_OBJS := $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_NCCL_SRCS))
EXTRA_TARGETS += $(BUILD)/libtrainscope-nccl.so
$(BUILD)/libtrainscope-nccl.so: $(CAP_NCCL_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_NCCL_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN' -pthread -ldl
TS_NCCL_TEST_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(CAPTURE_NCCL_SRCS) $(CAPTURE_TRACE_SRCS))
$(BUILD)/test/test_nccl: test/unit/test_nccl.c $(BUILD)/test/test_main.o $(TS_NCCL_TEST_OBJS) $(BUILD)/libtrainscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest $(TS_GPU_CFLAGS) -DTS_HAVE_NCCL -DTS_NCCL_LIBDIR='"$(TS_NCCL_LIB)"' $(LDFLAGS) \
	    -o $@ $< $(BUILD)/test/test_main.o \
	    $(TS_NCCL_TEST_OBJS) $(BUILD)/libtrainscope.a $(LDLIBS) $(MODULE_LDLIBS) -ldl \
	    -L$(TS_NCCL_LIB) -lnccl -Wl,-rpath,$(TS_NCCL_LIB)
endif

TS_LTTNG_UST := $(shell pkg-config --exists lttng-ust 2>/dev/null && echo yes)
ifeq ($(TS_LTTNG_UST),yes)
EXTRA_TARGETS += $(BUILD)/libtrainscope-lttng.so
CAP_LTTNG_OBJS := $(patsubst src/%.c,$(CAP_OBJ)/%.o,$(CAPTURE_LTTNG_SRCS))
$(BUILD)/libtrainscope-lttng.so: $(CAP_LTTNG_OBJS) $(BUILD)/libtrainscope-trace.so
	$(CC) -shared -o $@ $(CAP_LTTNG_OBJS) -L$(BUILD) -ltrainscope-trace -Wl,-rpath,'$$ORIGIN' \
	    $(shell pkg-config --libs lttng-ust) -ldl
endif

# src/ingest/ctf.c (capture-gpu) reads LTTng's CTF traces through libbabeltrace2,
# opened on first use (ingest/bt_api.h), so not linked; without its headers
# ctf.c compiles to a loader that says so.
