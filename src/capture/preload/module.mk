# src/capture/preload/ - what LD_PRELOAD adds to the runtime: exec/_exit hooks.
# Which library each file joins (file:library, see src/capture/module.mk):
CAPTURE_FILES += \
    preload/preload.c:preload
