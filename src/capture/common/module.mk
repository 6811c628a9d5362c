# src/capture/common/ - the pieces several capture libraries share: the raw
# stream format (rawfmt.h) and its converter to Chrome-trace JSON, which runs
# inside the traced process at exit and in `trainscope record` afterwards; and
# record_job.c, what `record` gathers about the job once it ends.
# Which library each file joins (file:library; src/capture/module.mk names
# the libraries and refuses a .c file that no list names):
CAPTURE_FILES += \
    common/raw2json.c:trace \
    common/raw2json.c:libtrainscope \
    common/record_job.c:libtrainscope
