# trainscope build.
#
#   make            optimized library (build/libtrainscope.a, .so) and CLI (build/trainscope)
#   make test       the whole test suite under ASan+UBSan (build/san/), ends "N passed, N failed"
#   make test-fast  the same suite against the optimized build
#   make bench      build the benchmarks (bench/*.c) next to the CLI
#   make fuzz       libFuzzer targets (fuzz/*.c, clang)
#   make hostile    every command on classes of bad input (bench/hostile.sh)
#   make setup      install Debian dependencies, build, run the example
#
# Sources are found by globbing src/<module>/*.c, so adding a file needs no edit
# here. A module that needs extra flags or libraries, or builds its own
# artifacts (the capture preload libraries), says so in src/<module>/module.mk.

CC       ?= cc
BUILD    ?= build
SAN      ?= 0
CUDA_HOME ?= /usr/local/cuda

WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -Iinclude -Isrc $(WARN) -pthread
ifeq ($(SAN),1)
  BUILD  := build/san
  OPT    := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  LDSAN  := -fsanitize=address,undefined
else
  OPT    ?= -O2 -g
  LDSAN  :=
endif
CFLAGS  := $(CFLAGS_BASE) $(OPT) $(EXTRA_CFLAGS)
LDLIBS  := -lm -pthread -lz -ldeflate -lisal -lzstd
LDFLAGS := $(LDSAN) $(EXTRA_LDFLAGS)

# Objects depend on the flags they were built with: FLAGS_STAMP holds them and
# is rewritten only when they change. Without it make keeps objects built with
# old flags (on 25 Nov, fuzz objects from before -fno-sanitize-recover let
# undefined behaviour pass as a clean run).
write_stamp = $(shell mkdir -p $(dir $(1)) && printf '%s\n' '$(2)' | cmp -s - $(1) || printf '%s\n' '$(2)' > $(1))
FLAGS_STAMP := $(BUILD)/.cflags
$(call write_stamp,$(FLAGS_STAMP),$(CC) $(CFLAGS) $(LDFLAGS))

MODULES  := core trace ingest graph analyze replay optimize memory report capture
# Sources of the library proper; a module.mk may append to LIB_SRCS or remove
# files that belong to a separate artifact (e.g. the capture preload library).
LIB_SRCS := $(foreach m,$(MODULES),$(wildcard src/$(m)/*.c))
CLI_SRCS := $(wildcard src/cli/*.c)
EXTRA_TARGETS :=
TEST_LDLIBS :=

-include $(wildcard src/*/module.mk)

LIB_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
CLI_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(CLI_SRCS))
DEPS     := $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)

UNIT_SRCS := $(wildcard test/unit/test_*.c)
UNIT_BINS := $(patsubst test/unit/%.c,$(BUILD)/test/%,$(UNIT_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: all lib cli test test-fast bench fuzz setup clean example hostile
all: $(BUILD)/libtrainscope.a $(BUILD)/libtrainscope.so $(BUILD)/trainscope $(EXTRA_TARGETS)

$(BUILD)/obj/%.o: src/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(MODULE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libtrainscope.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libtrainscope.so: $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS) $(MODULE_LDLIBS)

# The CLI takes libzstd in statically: each shared library is about 0.05 ms
# of every process's start here (libzstd.a is in libzstd-dev, like the .so).
CLI_LDLIBS := $(filter-out -lzstd,$(LDLIBS)) -Wl,-Bstatic -lzstd -Wl,-Bdynamic
$(BUILD)/trainscope: $(CLI_OBJS) $(BUILD)/libtrainscope.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(BUILD)/libtrainscope.a $(CLI_LDLIBS) $(MODULE_LDLIBS)

$(BUILD)/test/test_main.o: test/test_main.c test/test.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest -c $< -o $@

$(BUILD)/test/%: test/unit/%.c $(BUILD)/test/test_main.o $(BUILD)/libtrainscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest $(LDFLAGS) -o $@ $< $(BUILD)/test/test_main.o $(BUILD)/libtrainscope.a $(LDLIBS) $(MODULE_LDLIBS) $(TEST_LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libtrainscope.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtrainscope.a $(LDLIBS) $(MODULE_LDLIBS)

test:
	@$(MAKE) --no-print-directory SAN=1 all unit-bins
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 sh test/run.sh build/san

test-fast: all unit-bins
	@sh test/run.sh $(BUILD)

unit-bins: $(UNIT_BINS)

bench: all $(BENCH_BINS)

# Robustness to hostile input under the sanitizer build (bench/hostile.sh).
hostile:
	@$(MAKE) --no-print-directory SAN=1 all
	@sh bench/hostile.sh

# Fuzz targets: the library is compiled once with clang and libFuzzer's
# instrumentation into build/fuzz/obj/, then each fuzz/fuzz_<parser>.c links it.
FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_OBJS := $(patsubst src/%.c,build/fuzz/obj/%.o,$(LIB_SRCS))
# Undefined behaviour stops the run (as in the sanitizer test build): a
# fuzz target that only printed UBSan's report would pass CI.
FUZZ_CFLAGS := $(CFLAGS_BASE) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_STAMP := build/fuzz/.cflags
ifneq ($(filter fuzz build/fuzz/%,$(MAKECMDGOALS)),)
$(call write_stamp,$(FUZZ_STAMP),clang $(FUZZ_CFLAGS))
endif
fuzz: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_OBJS)

build/fuzz/obj/%.o: src/%.c $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(MODULE_CFLAGS) -MMD -MP -c $< -o $@

# Header dependencies, so a changed struct rebuilds every object that uses it
# (without them a stale object reads the old layout: garbage, not a finding).
-include $(FUZZ_OBJS:.o=.d)

build/fuzz/%: fuzz/%.c $(FUZZ_OBJS) $(wildcard fuzz/*.h)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS) $(MODULE_LDLIBS)

setup:
	sh scripts/install-deps.sh
	$(MAKE) all
	sh examples/run-example.sh

example: all
	sh examples/run-example.sh

clean:
	rm -rf build

-include $(DEPS)

# gpu-bundle: build/gpu-bundle/, a folder that runs where nothing can be
# installed (scripts/gpu-check.sh on a lent GPU machine): the CLI linked to
# find its libraries beside it (DT_RPATH $ORIGIN, which also serves their own
# dependencies), the capture libraries, the shared libraries they need that a
# bare system may lack, and python/. scripts/gpu-bundle.sh says what is copied.
gpu-bundle: all
	$(CC) $(LDFLAGS) -o $(BUILD)/trainscope-origin $(CLI_OBJS) $(BUILD)/libtrainscope.a $(LDLIBS) $(MODULE_LDLIBS) \
	    -Wl,--disable-new-dtags,-rpath,'$$ORIGIN'
	sh scripts/gpu-bundle.sh $(BUILD) $(BUILD)/gpu-bundle
.PHONY: gpu-bundle
