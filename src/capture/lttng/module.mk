# src/capture/lttng/ - the LTTng backend: tracepoints fired from the traced
# program (lttng.c, tracepoints in lttng_tp.h) and the session control that
# `trainscope record --lttng` runs (lttng_session.c, in the analysis library).
# Which library each file joins (file:library, see src/capture/module.mk):
CAPTURE_FILES += \
    lttng/lttng.c:lttng \
    lttng/lttng_session.c:libtrainscope
