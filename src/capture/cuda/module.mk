# src/capture/cuda/ - the CUDA collector (CUPTI activity tracing), built when
# cupti.h and libcupti.so are found under CUDA_HOME.
# Which library each file joins (file:library, see src/capture/module.mk):
CAPTURE_FILES += \
    cuda/cupti.c:cuda \
    cuda/cupti_convert.c:cuda \
    cuda/cupti_ranges.c:cuda
