# src/capture/nccl/ - the NCCL collector (NCCL API interposition), built when
# nccl.h and libnccl.so are found.
# Which library each file joins (file:library, see src/capture/module.mk):
CAPTURE_FILES += \
    nccl/nccl.c:nccl \
    nccl/nccl_emit.c:nccl \
    nccl/nccl_event.c:nccl
