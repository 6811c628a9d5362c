# src/capture/runtime/ - the host tracing API (include/trainscope/trace.h):
# start/stop, per-thread buffers, the Python profiling callback.
# Which library each file joins (file:library, see src/capture/module.mk):
CAPTURE_FILES += \
    runtime/rt_api.c:trace \
    runtime/rt_buffer.c:trace \
    runtime/rt_python.c:trace
