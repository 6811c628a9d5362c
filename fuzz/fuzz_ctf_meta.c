/* fuzz_ctf_meta.c - libFuzzer target for the TSDL subset that ctf_check.c
 * reads before libbabeltrace2 sees a trace (integer typealiases, structs,
 * align(N), packet.header, each stream's packet.context), plain or in
 * LTTng's packetized form. Seeds: the babeltrace writer's metadata
 * (fuzz/ctf_metadata.tsdl) and LTTng's packetized one of ls-ust. Build:
 * make fuzz. */
#include <stddef.h>
#include <stdint.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t bits = 0;
    (void)ts__ctf_check_layout_text((const char *)data, size, &bits);
    return 0;
}
