/* fuzz_summary.c — model summaries (torchsummary, torchinfo, module repr) through the parser and
 * every estimator, the path `carma estimate --summary` and the daemon's estimates take. */
#include "fuzz_common.h"

#include "estimate/estimate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static estimator e;
    static int ready;
    if (!ready) {
        setenv("CARMA_DATA_DIR", CARMA_SOURCE_DIR "/data", 1);
        estimator_init(&e);
        ready = 1;
    }
    char *text = fuzz_text(data, size);
    model_summary s;
    carma_err err;
    if (summary_parse("fuzz.model", text, &s, &err) == 0) {
        static const mem_source srcs[] = {MEM_HORUS, MEM_GPUMEMNET, MEM_CARMA};
        static const int batches[] = {1, 32, 1 << 20};
        for (size_t k = 0; k < sizeof srcs / sizeof srcs[0]; k++)
            for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
                est_result r;
                estimator_run(&e, srcs[k], &s, batches[b], (int)(size % 4096), &r, &err);
            }
        summary_free(&s);
    }
    free(text);
    return 0;
}
