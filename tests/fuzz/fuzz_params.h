/* The fuzz target of the parameter registry, shared by libFuzzer and the corpus replay. */
#ifndef RILL_TEST_FUZZ_PARAMS_H
#define RILL_TEST_FUZZ_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/** Where a broken invariant is reported before abort() (the replay points it at the real
 * stderr while the registry's own messages go to /dev/null). */
extern int rill_fuzz_report_fd;

/** One input: see fuzz_params.c. Always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
