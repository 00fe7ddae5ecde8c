/* The fuzz target of rillcc's front end (lexer, parser, checks): any bytes in, a clean
 * result out (a compiled program or errors), never a crash, a hang or a sanitizer report.
 * Shared by libFuzzer (tests/fuzz/run.sh rillcc) and the corpus replay (CTest). */
#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "fuzz_params.h"

int rill_fuzz_report_fd = 2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rillcc_compile("fuzz.rill", (const char *)data, size, NULL);
    rillcc_free_all();
    return 0;
}
